// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/lock_holder.ts`. */
export const LOCK_HOLDER: URL = new URL("./children/lock_holder.ts", import.meta.url);
/** `children/lock_taker.ts`. */
export const LOCK_TAKER: URL = new URL("./children/lock_taker.ts", import.meta.url);
/** `children/rotator.ts`. */
export const ROTATOR: URL = new URL("./children/rotator.ts", import.meta.url);
