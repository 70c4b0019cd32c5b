// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/probe.ts`. */
export const PROBE: URL = new URL("./children/probe.ts", import.meta.url);
