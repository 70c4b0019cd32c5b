// The syscall tier's append program, run under the file-system call recorder:
//   setup  <target> <db> <session>                creates the session (the baseline)
//   append <target> <db> <session> <count> <acks> appends m0..m(count-1), journaling
//                                                 {i, id} after each returned
// The acknowledgement journal is the recorder's mark file (FSREC_MARK), so each
// acknowledgement lands in the call log between the calls around it.
import { AckWriter } from "../harness/ack_journal.ts";
import { childArgs, openStoreFor } from "../cells/child_runtime.ts";

const USAGE = "_syscalls_child.ts setup <target> <db> <session> | append <target> <db> " +
  "<session> <count> <acks>";
const [mode, target, dbPath, session] = childArgs(4, USAGE);
const store = await openStoreFor(target!, dbPath!);
if (mode === "setup") {
  await store.createSession(session!);
} else if (mode === "append") {
  const [, , , , count, acksPath] = childArgs(6, USAGE);
  const acks = new AckWriter(acksPath!);
  const started = performance.now();
  for (let i = 0; i < Number(count); i++) {
    const id = await store.appendMessage(session!, { role: "user", content: `m${i}` });
    acks.write({ i, id });
  }
  acks.close();
  console.log(JSON.stringify({ appendMs: performance.now() - started }));
} else {
  console.error(`usage: ${USAGE}`);
  Deno.exit(2);
}
await store.close();
