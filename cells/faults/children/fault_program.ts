// The fault tier's writer: runs the fault program on the store under the recorder, which
// fails one of its calls; every operation is journalled (intent, then acknowledgement or
// the error it threw) and the program goes on after an error, as a caller that retries
// later work would.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { childArgs, openStoreFor } from "../../contract/child_runtime.ts";
import type { Store } from "../../contract/target.ts";
import { type FaultOp, faultProgram, textsOf } from "../_program.ts";

const [target, db, marksPath, seed, appends] = childArgs(
  4,
  "fault_program.ts <target> <db> <marks> <seed> [appends]",
);
const marks = new AckWriter(marksPath!);

async function journalled(
  i: number,
  op: FaultOp | { op: "open" | "close" },
  call: () => unknown,
): Promise<void> {
  const texts = op.op === "open" || op.op === "close" ? [] : textsOf(op as FaultOp);
  marks.write({ i, op: op.op, at: "intent", texts });
  try {
    const result = await call();
    marks.write({ i, op: op.op, at: "ack", result: result === undefined ? null : result });
  } catch (error) {
    const name = error instanceof Error ? error.name : typeof error;
    const message = error instanceof Error ? error.message : String(error);
    marks.write({ i, op: op.op, at: "threw", name, message: message.slice(0, 300) });
  }
}

function call(store: Store, op: FaultOp): () => unknown {
  if (op.op === "create") return () => store.createSession(op.session);
  if (op.op === "append") {
    return () => store.appendMessage(op.session, { role: "user", content: op.text });
  }
  const messages = op.texts.map((content) => ({ role: "user" as const, content }));
  return () => store.appendMessages!(op.session, messages);
}

let store: Store | undefined;
await journalled(-1, { op: "open" }, async () => {
  store = await openStoreFor(target!, db!, { busy: "thrown" });
});
if (store) {
  const opened = store;
  for (const [i, op] of faultProgram(Number(seed), Number(appends ?? 4)).entries()) {
    if (op.op === "batch" && typeof opened.appendMessages !== "function") {
      marks.write({ i, op: op.op, at: "skipped", why: "no appendMessages" });
      for (const [j, text] of op.texts.entries()) {
        const single: FaultOp = { op: "append", session: op.session, text };
        await journalled(i + j / 10, single, call(opened, single));
      }
      continue;
    }
    await journalled(i, op, call(opened, op));
  }
  await journalled(99, { op: "close" }, () => opened.close());
}
marks.close();
// The program is over: a process the store left running (a worker) must not keep this
// one alive, and a hang means an operation that never returned.
Deno.exit(0);
