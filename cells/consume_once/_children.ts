// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/claimant.ts`. */
export const CLAIMANT: URL = new URL("./children/claimant.ts", import.meta.url);
