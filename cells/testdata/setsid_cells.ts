// Registers cells for `setsid_target.ts` (run with `deno test`): `TREE_CELLS=1` a light
// cell 1 (its children are SIGKILLed mid-write, never closing the store), `TREE_CELLS=7`
// cell 7 with a 3 s lease (its owner stays SIGSTOPped that long).
import { fencedOwnershipCell } from "../fenced_ownership/cell.ts";
import { prefixDurabilityCell } from "../prefix_durability/cell.ts";

const target = new URL("./setsid_target.ts", import.meta.url);
const which = Deno.env.get("TREE_CELLS") ?? "1";
const definitions = which === "7"
  ? await fencedOwnershipCell({ target, leaseMs: 3_000, keepEvidence: false })
  : await prefixDurabilityCell({ target, minAcknowledged: 20, rounds: 2, keepEvidence: false });
for (const definition of definitions) Deno.test(definition);
