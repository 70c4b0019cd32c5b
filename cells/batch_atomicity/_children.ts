// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/batch_writer.ts`. */
export const BATCH_WRITER: URL = new URL("./children/batch_writer.ts", import.meta.url);

/** `children/long_writer.ts`. */
export const LONG_WRITER: URL = new URL("./children/long_writer.ts", import.meta.url);
