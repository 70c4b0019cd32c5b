// Under --quick the default leg's cells 2 and on are left to the leg asked for by name that
// ran in the very on-disk mode on the same library, and a leg on the second library to the
// same leg on the first where it ran in the same mode: the reference's default is DELETE on
// the WAL-reset-vulnerable system SQLite (a twin of the delete leg) and WAL on the fixed one
// (no twin: the default leg runs every cell), and its delete leg is DELETE on both.
import { deepStrictEqual, match } from "node:assert/strict";
import { runCells } from "./cells.ts";
import { resolveLibraries } from "./libraries.ts";

const REFERENCE = new URL("../cells/reference_target.ts", import.meta.url).href;

Deno.test("cells tier, --quick: a leg is left to its twin where it has one", async () => {
  const { libraries } = await resolveLibraries(["system", "fixed"]);
  const tier = await runCells({
    target: REFERENCE,
    cells: [1, 2],
    legs: ["default", "delete"],
    libraries,
    twinDefault: true,
    twinLibraries: true,
    env: { CELLS_SPAN: "0.25" },
  });
  const row = (leg: string, library: string, cell: number) =>
    tier.results.find((r) => r.leg === leg && r.library === library && r.cell === cell);
  const show = JSON.stringify(tier.results.map((r) => [r.leg, r.library, r.cell, r.status]));
  deepStrictEqual(
    [row("default", "system", 1)?.status, row("delete", "system", 1)?.status],
    ["PASS", "PASS"],
    show,
  );
  deepStrictEqual(row("delete", "system", 2)?.status, "PASS", show);
  const left = row("default", "system", 2);
  deepStrictEqual([left?.status, left?.skipKind], ["SKIP", "judged-on-twin"], show);
  match(left?.reason ?? "", /ran in delete, as the delete leg/);
  if (libraries.some((l) => l.label === "fixed")) {
    // WAL by default there: nothing asked for by name ran in that mode.
    deepStrictEqual(row("default", "fixed", 2)?.status, "PASS", show);
    deepStrictEqual(row("delete", "fixed", 1)?.status, "PASS", show);
    const across = row("delete", "fixed", 2);
    deepStrictEqual([across?.status, across?.skipKind], ["SKIP", "judged-on-twin"], show);
    match(across?.reason ?? "", /the delete leg ran in delete, as on the system library/);
  } else console.log("  the fixed SQLite is not built (deno task sqlite): its half is not run");
});
