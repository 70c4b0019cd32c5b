// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/chain_rotator.ts`. */
export const CHAIN_ROTATOR: URL = new URL("./children/chain_rotator.ts", import.meta.url);
/** `children/orphan_holder.ts`. */
export const ORPHAN_HOLDER: URL = new URL("./children/orphan_holder.ts", import.meta.url);
/** `children/resolver.ts`. */
export const RESOLVER: URL = new URL("./children/resolver.ts", import.meta.url);
/** `children/resumer.ts`. */
export const RESUMER: URL = new URL("./children/resumer.ts", import.meta.url);
/** `children/reopener.ts`. */
export const REOPENER: URL = new URL("./children/reopener.ts", import.meta.url);
