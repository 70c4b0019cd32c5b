// Cell 8 against the reference store, on the leg of this process: with its crash points,
// and declaring none (the kill series inside the publish instead).
import { ok } from "node:assert/strict";
import { runDefinitions } from "../engine/run_definitions.ts";
import { resumeResolutionCell } from "./cell.ts";

for (
  const [label, file] of [
    ["its crash points", "../reference_target.ts"],
    ["the kill series (no crash points declared)", "../testdata/unpointed_target.ts"],
  ] as const
) {
  Deno.test({
    name: `cell 8 passes on the reference store, ${label}`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const started = performance.now();
      const definitions = await resumeResolutionCell({ target: new URL(file, import.meta.url) });
      for (const outcome of await runDefinitions(definitions)) {
        ok(outcome.status === "PASS", `${outcome.status} ${outcome.name}: ${outcome.detail ?? ""}`);
      }
      console.log(`  cell 8 took ${Math.round(performance.now() - started)} ms`);
    },
  });
}
