// Cell 12 against the reference store, on the leg of this process, with the kill series.
import { ok } from "node:assert/strict";
import { runDefinitions } from "../engine/run_definitions.ts";
import { pendingHandoffsCell } from "./cell.ts";

Deno.test({
  name: "cell 12 passes on the reference store, the kill series included",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const definitions = await pendingHandoffsCell({
      target: new URL("../reference_target.ts", import.meta.url),
    });
    for (const outcome of await runDefinitions(definitions)) {
      ok(outcome.status === "PASS", `${outcome.status} ${outcome.name}: ${outcome.detail ?? ""}`);
    }
  },
});
