// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/editor.ts`. */
export const EDITOR: URL = new URL("./children/editor.ts", import.meta.url);
