// The message `children/last_write.ts` appends for an `appendMessage` write: the same each time,
// as a user answers "yes" twice in a row. Imported by the child and by the cell that judges it.

/** The user turn appended by every `appendMessage` write of the last-write child. */
export const REPEATED_TURN = { role: "user", content: "yes" } as const;
