// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/fence_child.ts`. */
export const FENCE_CHILD: URL = new URL("./children/fence_child.ts", import.meta.url);
/** `children/last_write.ts`. */
export const LAST_WRITE: URL = new URL("./children/last_write.ts", import.meta.url);
/** `children/race_child.ts`. */
export const RACE_CHILD: URL = new URL("./children/race_child.ts", import.meta.url);
