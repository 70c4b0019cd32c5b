// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/lock_hog.ts`. */
export const LOCK_HOG: URL = new URL("./children/lock_hog.ts", import.meta.url);
/** `children/long_reader.ts`. */
export const LONG_READER: URL = new URL("./children/long_reader.ts", import.meta.url);
/** `children/role_writer.ts`. */
export const ROLE_WRITER: URL = new URL("./children/role_writer.ts", import.meta.url);
/** `children/open_holder.ts`. */
export const OPEN_HOLDER: URL = new URL("./children/open_holder.ts", import.meta.url);
/** `children/opener.ts`. */
export const OPENER: URL = new URL("./children/opener.ts", import.meta.url);
