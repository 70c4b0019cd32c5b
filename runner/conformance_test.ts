// Which tiers can judge a store: every tier that can runs, whatever the store runs on
// (the power-loss cells no longer need this project's binding), and a store that cannot
// open has every later tier skipped with its own error (its cells tier is the FAIL).
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { tierSkip, tierUnits } from "./_tool_tiers.ts";
import { legFound, LegsFound, twinLeg } from "./_twin_legs.ts";
import type { Capabilities } from "./report_schema.ts";

const caps = (extra: Partial<Capabilities> = {}): Capabilities => ({
  methods: [],
  cells: Object.fromEntries(
    [1, 2, 3, 4, 5, 6, 7].map((id) => [id, { available: true, missing: [] }]),
  ),
  crashPoints: 0,
  legsHonoured: [],
  legsNotHonoured: [],
  sqliteFile: true,
  binding: false,
  engine: { kind: "own-sqlite", sqliteVersion: "3.50.4" },
  recorder: { ok: true },
  ...extra,
});

Deno.test("tiers: a store on its own SQLite gets the power-loss cells and the file-system call tiers", () => {
  for (const tier of ["powerloss-cells", "syscalls-crash", "syscalls-power-loss"] as const) {
    strictEqual(tierSkip(tier, caps()), undefined, tier);
  }
  deepStrictEqual(tierSkip("sweep", caps()), {
    reason: "the target declares no crash points (export crashPoints())",
    skipKind: "no-crash-points",
  });
  strictEqual(tierSkip("sweep", caps({ crashPoints: 3 })), undefined);
  deepStrictEqual(tierUnits("powerloss-cells", caps()), [[1, 5], [3, 4], [8, 9, 10], [11, 12]]);
  const noOutbox = caps();
  noOutbox.cells[5] = { available: false, missing: ["recordObligation"] };
  deepStrictEqual(tierUnits("powerloss-cells", noOutbox), [[1], [3, 4], [8, 9, 10], [11, 12]]);
  // --cells: only the units of the cells asked for, and none without a power-loss variant.
  deepStrictEqual(tierUnits("powerloss-cells", caps(), [5, 9, 10]), [[5], [9, 10]]);
  deepStrictEqual(tierUnits("powerloss-cells", caps(), [2, 6]), []);
});

Deno.test("tiers: without the recorder or an open store, the later tiers say why", () => {
  const noRecorder = caps({ recorder: { ok: false, reason: "no cc" } });
  deepStrictEqual(tierSkip("powerloss-cells", noRecorder), { reason: "no cc" });
  deepStrictEqual(tierSkip("syscalls-crash", noRecorder), { reason: "no cc" });
  const broken = caps({ openError: "openStore threw: Error: boom" });
  deepStrictEqual(tierSkip("powerloss-cells", broken), {
    reason: "the store cannot open and write: openStore threw: Error: boom",
  });
  // The fault tier runs without the recorder: its clauses that need it SKIP one by one.
  strictEqual(tierSkip("faults", noRecorder), undefined);
  deepStrictEqual(tierSkip("faults", broken), {
    reason: "the store cannot open and write: openStore threw: Error: boom",
  });
});

Deno.test("--quick: the default leg in the very mode of a named leg is left to it, nothing else", () => {
  const named = (...found: [string, { honoured: boolean; mode?: string }][]) => new Map(found);
  // The reference on SQLite 3.40.1: its default is DELETE, the delete leg too.
  strictEqual(
    twinLeg(
      { honoured: true, mode: "delete" },
      named(["delete", { honoured: true, mode: "delete" }]),
    ),
    "delete",
  );
  strictEqual(
    twinLeg(
      { honoured: true, mode: "wal" },
      named(["delete", { honoured: true, mode: "delete" }], ["wal", {
        honoured: true,
        mode: "wal",
      }]),
    ),
    "wal",
  );
  // The named twin did not run (not honoured): the default leg keeps its work.
  strictEqual(
    twinLeg({ honoured: true, mode: "wal" }, named(["wal", { honoured: false }])),
    undefined,
  );
  strictEqual(
    twinLeg({ honoured: true, mode: "wal" }, named(["delete", { honoured: true, mode: "delete" }])),
    undefined,
  );
  // Observations in two modes, or a default leg that did not run: no twin.
  strictEqual(
    twinLeg({ honoured: true }, named(["delete", { honoured: true, mode: "delete" }])),
    undefined,
  );
  strictEqual(
    twinLeg(
      { honoured: false, mode: "delete" },
      named(["delete", { honoured: true, mode: "delete" }]),
    ),
    undefined,
  );
});

Deno.test("--quick: what cell 1 found on a leg: honoured unless SKIPPED, its one observed mode", () => {
  const cell1 = (status: "PASS" | "SKIP", legObservations: Record<string, number>) => ({
    clause: "1 prefix durability",
    cell: 1,
    tier: "cells" as const,
    leg: "default",
    library: "system",
    status,
    figures: { legObservations },
  });
  deepStrictEqual(legFound(cell1("PASS", { wal: 5 })), { honoured: true, mode: "wal" });
  deepStrictEqual(legFound(cell1("PASS", { wal: 3, delete: 2 })), { honoured: true });
  deepStrictEqual(legFound(cell1("SKIP", {})), { honoured: false });
  deepStrictEqual(legFound(undefined), { honoured: false });
});

Deno.test("--quick: a leg on a later library in the very mode it ran in on an earlier one is left there", async () => {
  const found = new LegsFound();
  const libraries = ["system", "fixed"];
  const legs = ["default", "delete", "wal"];
  // The reference: DELETE by default on the system SQLite, WAL by default on the fixed one;
  // the wal leg not honoured on the system SQLite.
  found.record({ leg: "default", library: "system" }, { honoured: true, mode: "delete" });
  found.record({ leg: "delete", library: "system" }, { honoured: true, mode: "delete" });
  found.record({ leg: "wal", library: "system" }, { honoured: false });
  found.record({ leg: "default", library: "fixed" }, { honoured: true, mode: "wal" });
  found.record({ leg: "delete", library: "fixed" }, { honoured: true, mode: "delete" });
  found.record({ leg: "wal", library: "fixed" }, { honoured: true, mode: "wal" });
  const twin = (leg: string, library: string) =>
    found.twinOf({ leg, library }, { legs, libraries });
  deepStrictEqual(await twin("delete", "fixed"), {
    leg: "delete",
    library: "system",
    mode: "delete",
  });
  deepStrictEqual(await twin("default", "system"), {
    leg: "delete",
    library: "system",
    mode: "delete",
  });
  deepStrictEqual(await twin("default", "fixed"), { leg: "wal", library: "fixed", mode: "wal" });
  // First of its mode: the system library's delete leg, the fixed one's wal leg.
  strictEqual(await twin("delete", "system"), undefined);
  strictEqual(await twin("wal", "fixed"), undefined);
  strictEqual(await found.mayTwinAcross({ leg: "wal", library: "fixed" }, libraries), false);
  strictEqual(await found.mayTwinAcross({ leg: "delete", library: "fixed" }, libraries), true);
  strictEqual(await found.mayTwinAcross({ leg: "delete", library: "system" }, libraries), false);
  // Without the libraries (one library, or not asked), a named leg has no twin.
  strictEqual(await found.twinOf({ leg: "delete", library: "fixed" }, { legs }), undefined);
  // Another mode on the later library: judged there.
  const apart = new LegsFound();
  apart.record({ leg: "delete", library: "system" }, { honoured: true, mode: "delete" });
  apart.record({ leg: "delete", library: "fixed" }, { honoured: true, mode: "wal" });
  strictEqual(
    await apart.twinOf({ leg: "delete", library: "fixed" }, { legs, libraries }),
    undefined,
  );
});
