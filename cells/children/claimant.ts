// Cell 2's child: opens the store, signals ready, waits for the barrier, claims once.
// Exit 0 won, 10 lost, 3 barrier timeout; anything else is a crash.
import { awaitBarrier, signalReady } from "../../harness/barrier.ts";
import { LOST, TIMED_OUT, WON } from "../../harness/child.ts";
import { childArgs, openStoreFor } from "../child_runtime.ts";

const [target, dbPath, runDir, name, barrier, session] = childArgs(
  6,
  "claimant.ts <target> <db> <run dir> <name> <barrier> <session>",
);
const store = await openStoreFor(target!, dbPath!);
signalReady(runDir!, name!);
if (!awaitBarrier(barrier!, 30_000)) {
  console.error(`claimant ${name}: the barrier was not released within 30 s`);
  Deno.exit(TIMED_OUT);
}
const won = await store.claimHandoff!(session!);
await store.close();
Deno.exit(won ? WON : LOST);
