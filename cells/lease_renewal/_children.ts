// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/holder.ts`. */
export const HOLDER: URL = new URL("./children/holder.ts", import.meta.url);
/** `children/renewer.ts`. */
export const RENEWER: URL = new URL("./children/renewer.ts", import.meta.url);
