// Cell 2's child: opens the store, signals ready, waits for the barrier, claims once.
// Exit 0 won, 10 lost, 3 barrier timeout; anything else is a crash.
import { LOST, WON } from "../../../harness/child.ts";
import { awaitRelease, childArgs, marked, openStoreFor } from "../../contract/child_runtime.ts";

const [target, dbPath, runDir, name, barrier, session] = childArgs(
  6,
  "claimant.ts <target> <db> <run dir> <name> <barrier> <session>",
);
const store = await openStoreFor(target!, dbPath!);
awaitRelease({ runDir: runDir!, name: name!, barrier: barrier!, who: `claimant ${name}` });
// Marked for the claim series, which stops it inside the claim (a no-op otherwise).
const won = await marked("claimHandoff", () => store.claimHandoff!(session!));
await store.close();
Deno.exit(won ? WON : LOST);
