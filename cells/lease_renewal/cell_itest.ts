// Cell 11 against the reference store, on the leg of this process, with the stop series.
import { ok } from "node:assert/strict";
import { runDefinitions } from "../engine/run_definitions.ts";
import { leaseRenewalCell } from "./cell.ts";

Deno.test({
  name: "cell 11 passes on the reference store, the stop series included",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const definitions = await leaseRenewalCell({
      target: new URL("../reference_target.ts", import.meta.url),
      raceSeries: "locks",
    });
    for (const outcome of await runDefinitions(definitions)) {
      ok(outcome.status === "PASS", `${outcome.status} ${outcome.name}: ${outcome.detail ?? ""}`);
    }
  },
});
