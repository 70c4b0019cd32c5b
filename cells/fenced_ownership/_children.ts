// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/settle_guards.ts`. */
export const SETTLE_GUARDS: URL = new URL("./children/settle_guards.ts", import.meta.url);
/** `children/stale_owner.ts`. */
export const STALE_OWNER: URL = new URL("./children/stale_owner.ts", import.meta.url);
