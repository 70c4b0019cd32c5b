// The child scripts of this folder, found by URL from here: the suite runs the same from a
// checkout or a remote URL.

/** `children/outbox_stop.ts`. */
export const OUTBOX_STOP: URL = new URL("./children/outbox_stop.ts", import.meta.url);
/** `children/recoverer.ts`. */
export const RECOVERER: URL = new URL("./children/recoverer.ts", import.meta.url);
/** `children/restarted_sender.ts`. */
export const RESTARTED_SENDER: URL = new URL("./children/restarted_sender.ts", import.meta.url);
/** `children/sender.ts`. */
export const SENDER: URL = new URL("./children/sender.ts", import.meta.url);
