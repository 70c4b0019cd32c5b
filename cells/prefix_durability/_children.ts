// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/prefix_writer.ts`. */
export const PREFIX_WRITER: URL = new URL("./children/prefix_writer.ts", import.meta.url);
