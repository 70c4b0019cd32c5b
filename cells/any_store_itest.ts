// Any kind of store is judgeable: a JSON-lines log (not SQLite) registers without
// throwing, runs every cell it has the methods for on the default leg, and gets the
// journal-mode legs SKIPPED as not applicable; a broken one still fails cell 1.
import { ok, strictEqual } from "node:assert/strict";
import { currentLeg, type LegName } from "../harness/legs.ts";
import { CELLS } from "./register.ts";
import { runDefinitions } from "./engine/run_definitions.ts";

const options = { sanitizeResources: false, sanitizeOps: false };
const jsonl = (name: string) => new URL(`./testdata/jsonl_store/${name}.ts`, import.meta.url);
const legNamed = (name: LegName) => ({ ...currentLeg(), name });

Deno.test({
  name: "a store that is not SQLite passes cells 1, 6 and 13 and SKIPs cells 2 to 5 by capability",
  ...options,
  async fn() {
    const leg = legNamed("default");
    const [cell1] = await runDefinitions(
      await CELLS[1]({ target: jsonl("target"), leg, keepEvidence: false }),
    );
    strictEqual(cell1?.status, "PASS", cell1?.detail);
    // Several processes on one log: it locks each append, so cell 6 holds too.
    const [cell6] = await runDefinitions(
      // A longer span than the default: this store is quick, and its kills must land mid-work.
      await CELLS[6]({ target: jsonl("target"), leg, keepEvidence: false, span: 4 }),
    );
    strictEqual(cell6?.status, "PASS", cell6?.detail);
    // Its core methods are all cell 13 needs: an append to a missing session refused, typed.
    const [cell13] = await runDefinitions(
      await CELLS[13]({ target: jsonl("target"), leg, keepEvidence: false }),
    );
    strictEqual(cell13?.status, "PASS", cell13?.detail);
    for (const cell of [2, 3, 4, 5] as const) {
      const definitions = await CELLS[cell]({ target: jsonl("target"), leg, keepEvidence: false });
      strictEqual(definitions[0]?.ignore, true, `cell ${cell} ran: ${definitions[0]?.name}`);
      ok(/SKIP: the store lacks /.test(definitions[0]!.name), definitions[0]!.name);
    }
  },
});

Deno.test({
  name: "the journal-mode legs are not applicable to a store that is not SQLite",
  ...options,
  async fn() {
    for (const name of ["delete", "wal"] as const) {
      const definitions = await CELLS[1]({
        target: jsonl("target"),
        leg: legNamed(name),
        keepEvidence: false,
      });
      strictEqual(definitions[0]?.ignore, true, `leg ${name} ran: ${definitions[0]?.name}`);
      ok(
        definitions[0]!.name.includes(
          `leg ${name} not applicable: journal-mode legs are an SQLite notion`,
        ),
        definitions[0]!.name,
      );
    }
  },
});

Deno.test({
  name: "a store that is not SQLite and cannot reopen after a crash fails cell 1",
  ...options,
  async fn() {
    const [outcome] = await runDefinitions(
      await CELLS[1]({
        target: jsonl("stale_lock"),
        leg: legNamed("default"),
        keepEvidence: false,
      }),
    );
    strictEqual(outcome?.status, "FAIL", outcome?.detail);
    ok(outcome.detail?.includes("it is locked"), outcome.detail);
  },
});
