// Cell 10's racer: opens the store, signals ready, waits for the barrier, then makes one
// call on the session: `ensure` (ensureSession, then appends its name: exit 0), `end`
// (endSession with its name as the reason) or `reopen` (exit 0 when it returned true, 10
// when false). 3 is a barrier timeout; any other code (an error the store threw) a failure.
import { LOST, WON } from "../../../harness/child.ts";
import { awaitRelease, childArgs, marked, openStoreFor } from "../../contract/child_runtime.ts";

const [target, dbPath, runDir, name, barrier, session, op = "ensure"] = childArgs(
  6,
  "ensurer.ts <target> <db> <run dir> <name> <barrier> <session> [ensure|end|reopen]",
);
const store = await openStoreFor(target!, dbPath!);
awaitRelease({ runDir: runDir!, name: name!, barrier: barrier!, who: `racer ${name}` });
// Marked for the racer series, which stops it inside the call (a no-op otherwise).
const call = () =>
  op === "end"
    ? store.endSession!(session!, name!)
    : op === "reopen"
    ? store.reopenSession!(session!)
    : store.ensureSession!(session!);
const answer = await marked(`${op}Session`, call);
// The racers append at once (a busy refusal is made again by the store's wrapper).
if (op === "ensure") await store.appendMessage(session!, { role: "user", content: name! });
await store.close();
Deno.exit(op === "ensure" || answer === true ? WON : LOST);
