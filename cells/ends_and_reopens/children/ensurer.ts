// Cell 10's racer: opens the store, signals ready, waits for the barrier, ensures the
// session, appends its name to it. Exit 0 done, 3 barrier timeout; any other code (an
// error the store threw) is a failure.
import { awaitBarrier, signalReady } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import {
  CHILD_LIFETIME_MS,
  childArgs,
  marked,
  openStoreFor,
} from "../../contract/child_runtime.ts";

const [target, dbPath, runDir, name, barrier, session] = childArgs(
  6,
  "ensurer.ts <target> <db> <run dir> <name> <barrier> <session>",
);
const store = await openStoreFor(target!, dbPath!);
signalReady(runDir!, name!);
if (!awaitBarrier(barrier!, CHILD_LIFETIME_MS)) {
  console.error(`racer ${name}: the barrier was not released within ${CHILD_LIFETIME_MS} ms`);
  Deno.exit(TIMED_OUT);
}
// Marked for the ensure series, which stops it inside the ensure (a no-op otherwise).
await marked("ensureSession", () => store.ensureSession!(session!));
await store.appendMessage(session!, { role: "user", content: name! });
await store.close();
Deno.exit(0);
