// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/handoffs.ts`. */
export const HANDOFFS: URL = new URL("./children/handoffs.ts", import.meta.url);
