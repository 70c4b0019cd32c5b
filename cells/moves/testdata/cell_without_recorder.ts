// Runs cell 9 on the reference store declaring no crash points (its kill series walks
// appendMessages at every call) and prints its outcome as JSON: run with `CC` naming
// no compiler, so that the file-system call recorder cannot be built.
import { batchAtomicityCell } from "../../batch_atomicity/cell.ts";
import { runDefinitions } from "../../engine/run_definitions.ts";

const target = new URL("../../testdata/unpointed_target.ts", import.meta.url);
const [outcome] = await runDefinitions(await batchAtomicityCell({ target, keepEvidence: false }));
console.log(JSON.stringify({ status: outcome?.status, detail: outcome?.detail }));
