// What cell 10 reads of a file from the test process, in the SIGKILL cell and the power-loss
// tier alike: one recovery pass (the cycled session's rows and end, the invariants), and
// appends from a fresh open to the session and the two beside it.
import { type Answer, answerOf } from "../contract/typed.ts";
import { invariantsOf, withStore } from "../contract/with_store.ts";
import { BYSTANDERS, CYCLED } from "./cycles.ts";

/** One recovery pass: the session's rows and end, and the store's invariants. */
export function readPass(target: string, db: string): Promise<{
  rows: { id: number; content: string | null }[];
  session: { endedAt: number | null; endReason: string | null } | undefined;
  invariants: string[];
}> {
  return withStore(target, db, async (store) => {
    const rows = (await store.getMessages(CYCLED)).map(({ id, content }) => ({ id, content }));
    const found = store.getSession ? await store.getSession(CYCLED) : undefined;
    const session = found ? { endedAt: found.endedAt, endReason: found.endReason } : undefined;
    return { rows, session, invariants: await invariantsOf(store) };
  });
}

/** How a fresh open's appends are made and read. */
export interface ProbeOptions {
  /** The appended message's content. */
  content: string;
  /**
   * What the ended bystander's reason reads as when `getSession` gives none (it does not
   * find the session): `null` (its end lost: judged) where it was made before any kill,
   * `undefined` (not judged) where a state may come before it.
   */
  notFound: null | undefined;
}

/** Appends from a fresh open to the session and to the two beside it, after the reads. */
export function probeAppends(target: string, db: string, options: ProbeOptions): Promise<{
  probe: Answer;
  bystanders: { open: Answer; ended: Answer; endedReason: string | null | undefined };
}> {
  const { content, notFound } = options;
  return withStore(target, db, async (store) => {
    const append = (session: string) =>
      answerOf(() => store.appendMessage(session, { role: "user", content }));
    const probe = await append(CYCLED);
    const open = await append(BYSTANDERS.open);
    const ended = await append(BYSTANDERS.ended);
    const reason = store.getSession
      ? (await store.getSession(BYSTANDERS.ended))?.endReason
      : undefined;
    const endedReason = store.getSession && reason === undefined ? notFound : reason;
    return { probe, bystanders: { open, ended, endedReason } };
  });
}
