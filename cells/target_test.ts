// The target contract: a store lacking a cell's methods gets that cell SKIPPED with a
// reason naming them (an ignored test: never FAILED, never PASSED), and CELL_METHODS
// documents exactly what each cell asks for.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { currentLeg } from "../harness/legs.ts";
import { type CellId, CELLS } from "./register.ts";
import { runDefinitions } from "./run_definitions.ts";
import { CELL_METHODS, type StoreMethod } from "./target.ts";

const options = { sanitizeResources: false, sanitizeOps: false };
// The default leg whatever this process runs on: the cases are about methods, not modes.
const leg = { ...currentLeg(), name: "default" as const };
const testTarget = (name: string) => new URL(`./testdata/${name}.ts`, import.meta.url);

/** The methods a cell's skip reason names, or `undefined` when the cell would run. */
async function skipped(target: URL, cell: CellId): Promise<StoreMethod[] | undefined> {
  const definitions = await CELLS[cell]({ target, leg, keepEvidence: false });
  strictEqual(definitions.length, 1);
  const definition = definitions[0]!;
  if (!definition.ignore) return undefined;
  const match = / SKIP: the store lacks (.+)$/.exec(definition.name);
  ok(match, `cell ${cell} is ignored for another reason: ${definition.name}`);
  return match[1]!.split(", ") as StoreMethod[];
}

Deno.test({
  name: "a store without the outbox gets cell 5 SKIPPED, naming the missing methods",
  ...options,
  async fn() {
    const target = testTarget("no_outbox_target");
    const definitions = await CELLS[5]({ target, leg, keepEvidence: false });
    const [outcome] = await runDefinitions(definitions);
    strictEqual(outcome?.status, "SKIP", "cell 5 must be skipped, never passed or failed");
    strictEqual(definitions[0]?.ignore, true, "deno test must report it ignored");
    strictEqual(
      outcome.detail,
      "the store lacks recordObligation, markAttempting, markDelivered, sweepRecoverable, listObligations",
    );
    for (const cell of [1, 2, 3, 4] as const) {
      strictEqual(await skipped(target, cell), undefined, `cell ${cell} must still run`);
    }
  },
});

Deno.test({
  name: "CELL_METHODS names exactly what each cell requires",
  ...options,
  async fn() {
    const core: StoreMethod[] = ["createSession", "appendMessage", "getMessages", "close"];
    const target = testTarget("core_only_target");
    strictEqual(await skipped(target, 1), undefined, "cell 1 needs only the core");
    for (const cell of [2, 3, 4, 5] as const) {
      deepStrictEqual(
        await skipped(target, cell),
        [
          ...CELL_METHODS[cell].filter((m) => !core.includes(m)),
          // Cell 4 tells a missing branch from an empty one by either of these.
          ...(cell === 4 ? ["one of getSession or listSessions"] : []),
        ],
        `cell ${cell}`,
      );
    }
    deepStrictEqual(CELL_METHODS[1], core);
  },
});
