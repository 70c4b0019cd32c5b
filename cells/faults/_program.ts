// The short program every injected fault interrupts, shared by its child and its judge:
// a session, single appends and a batch, each journalled as an intent and then as its
// acknowledgement or the error it threw, so the judge knows what was promised.

/** One operation of the program. */
export type FaultOp =
  | { op: "create"; session: string }
  | { op: "append"; session: string; text: string }
  | { op: "batch"; session: string; texts: string[] };

/** A line of the program's journal. */
export type FaultMark =
  | { i: number; op: string; at: "intent"; texts: string[] }
  | { i: number; op: string; at: "ack"; result: unknown }
  | { i: number; op: string; at: "threw"; name: string; message: string }
  | { i: number; op: string; at: "skipped"; why: string };

/** The session the program writes. */
export const FAULT_SESSION = "faults";

/**
 * The program for a seed: a session, `appends` single appends (4, the short program every
 * call of which is failed in turn; more for the sampled long run) and a batch of two in
 * their middle (a store without `appendMessages` appends the two one by one, journalled
 * as skipped).
 */
export function faultProgram(seed: number, appends = 4): FaultOp[] {
  const text = (n: string) => `fault-${seed}-${n}`;
  const session = FAULT_SESSION;
  const middle = Math.floor(appends / 2) + 1;
  const program: FaultOp[] = [{ op: "create", session }];
  for (let n = 1; n <= appends + 1; n++) {
    program.push(
      n === middle
        ? { op: "batch", session, texts: [text(`${n}a`), text(`${n}b`)] }
        : { op: "append", session, text: text(String(n)) },
    );
  }
  return program;
}

/** The texts an operation writes. */
export function textsOf(op: FaultOp): string[] {
  return op.op === "append" ? [op.text] : op.op === "batch" ? op.texts : [];
}
