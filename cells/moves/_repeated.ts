// What `children/last_write.ts` writes for an `appendMessage` or a `recordObligation` write: the
// same each time, as a user answers "yes" twice in a row and an agent tells them "Done." twice.
// Imported by the child and by the move that judges it (`repeated.ts`).

/** The user turn appended by every `appendMessage` write of the last-write child. */
export const REPEATED_TURN = { role: "user", content: "yes" } as const;

/** The content of every obligation a `recordObligation` write records (each its own message). */
export const REPEATED_EFFECT = "Done.";
