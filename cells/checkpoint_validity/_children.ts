// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/calls.ts`. */
export const CALLS: URL = new URL("./children/calls.ts", import.meta.url);
