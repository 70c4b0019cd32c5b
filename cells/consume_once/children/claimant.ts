// Cell 2's child: opens the store, signals ready, waits for the barrier, claims once.
// Exit 0 won, 10 lost, 3 barrier timeout; anything else is a crash.
import { awaitBarrier, signalReady } from "../../../harness/barrier.ts";
import { LOST, TIMED_OUT, WON } from "../../../harness/child.ts";
import {
  CHILD_LIFETIME_MS,
  childArgs,
  marked,
  openStoreFor,
} from "../../contract/child_runtime.ts";

const [target, dbPath, runDir, name, barrier, session] = childArgs(
  6,
  "claimant.ts <target> <db> <run dir> <name> <barrier> <session>",
);
const store = await openStoreFor(target!, dbPath!);
signalReady(runDir!, name!);
// Longer than the parent waits for every claimant to be ready (60 s): a slow start of the
// others never times this one out first.
if (!awaitBarrier(barrier!, CHILD_LIFETIME_MS)) {
  console.error(`claimant ${name}: the barrier was not released within ${CHILD_LIFETIME_MS} ms`);
  Deno.exit(TIMED_OUT);
}
// Marked for the claim series, which stops it inside the claim (a no-op otherwise).
const won = await marked("claimHandoff", () => store.claimHandoff!(session!));
await store.close();
Deno.exit(won ? WON : LOST);
