// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/cycler.ts`. */
export const CYCLER: URL = new URL("./children/cycler.ts", import.meta.url);
/** `children/ensurer.ts`. */
export const ENSURER: URL = new URL("./children/ensurer.ts", import.meta.url);
