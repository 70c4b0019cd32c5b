// The cells tier reads only the cells' report files: a missing report is an ERROR, never
// a PASS; a late SKIP (a leg found not honoured after the run, which fails its test) is
// no broken run; a failing test run with every cell PASS is an ERROR.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import type { CellReport } from "../cells/engine/report.ts";
import { exists } from "../internal/fs.ts";
import { type CellsOptions, legOutcomes, type LegRun } from "./cells.ts";

const run: LegRun = { leg: "delete", library: { label: "system", path: "/lib.so" }, run: 1 };
const options: CellsOptions = {
  target: "file:///t.ts",
  cells: [1, 2],
  legs: ["delete"],
  libraries: [run.library],
};
const report = (cell: number, status: CellReport["status"], extra: Partial<CellReport> = {}) => ({
  cell,
  title: `c${cell}`,
  target: "file:///t.ts",
  leg: "delete",
  sqliteVersion: "3.40.1",
  library: "/lib.so",
  status,
  figures: { seed: 7 },
  ...extra,
});

Deno.test("cells tier: a requested cell with no report is an ERROR with the exit code and the output's tail", () => {
  const outcomes = legOutcomes(run, {
    reports: [report(1, "PASS")],
    code: 1,
    tail: "panic: out of file descriptors",
    seconds: 1,
  }, options);
  deepStrictEqual(outcomes.map((o) => [o.cell, o.status]), [[1, "PASS"], [2, "ERROR"]]);
  match(
    outcomes[1]!.reason!,
    /^The test run exited 1 and wrote no report for cell 2: panic: out of/,
  );
  strictEqual(
    outcomes[1]!.replay,
    "deno task matrix --target file:///t.ts --cells 2 --legs delete --libraries system",
  );
  const killed = legOutcomes(
    run,
    { reports: [], code: null, tail: "killed past", seconds: 9 },
    options,
  );
  deepStrictEqual(killed.map((o) => o.status), ["ERROR", "ERROR"]);
  match(killed[0]!.reason!, /^The test run was killed and wrote no report/);
});

Deno.test("cells tier: a late SKIP is no broken run; a failed run with every cell PASS is an ERROR", () => {
  const late = legOutcomes(run, {
    reports: [
      report(1, "SKIP", { reason: "leg delete not honoured", evidence: "/e" }),
      report(2, "PASS"),
    ],
    code: 1,
    tail: "",
    seconds: 1,
  }, options);
  deepStrictEqual(late.map((o) => [o.cell, o.status]), [[1, "SKIP"], [2, "PASS"]]);
  const odd = legOutcomes(run, {
    reports: [report(1, "PASS"), report(2, "PASS")],
    code: 1,
    tail: "error: Uncaught TypeError",
    seconds: 1,
  }, options);
  deepStrictEqual(odd.map((o) => o.status), ["PASS", "PASS", "ERROR"]);
  match(odd[2]!.reason!, /although every cell reported PASS: error: Uncaught TypeError/);
});

Deno.test("cells tier: a FAIL keeps its checks, diagnoses and replay; ERROR counts as neither", () => {
  const [fail, error] = legOutcomes(run, {
    reports: [
      report(1, "FAIL", {
        reason: "Failed check(s):\nprefix: lost m3\nintegrity: ok",
        checks: ["prefix: lost m3", "integrity: ok"],
        diagnoses: [{ pattern: "ack-before-commit", cause: "c", fix: "f" }],
      }),
      report(2, "ERROR", {
        reason: "Failed check(s):\nkill: did not land",
        checks: ["kill: did not land"],
      }),
    ],
    code: 1,
    tail: "",
    seconds: 1,
  }, options);
  deepStrictEqual(fail!.checks, ["prefix: lost m3", "integrity: ok"]);
  strictEqual(fail!.diagnoses?.[0]?.pattern, "ack-before-commit");
  strictEqual(fail!.seed, 7);
  strictEqual(
    fail!.replay,
    "deno task matrix --target file:///t.ts --cells 1 --legs delete --libraries system --seed 7",
  );
  strictEqual(error!.status, "ERROR");
  deepStrictEqual(error!.checks, ["kill: did not land"]);
  // The checks are the report's: its reason's text is never parsed into checks.
  const [bare] = legOutcomes(run, {
    reports: [report(1, "FAIL", { reason: "Failed check(s):\nprefix: lost m3" })],
    code: 1,
    tail: "",
    seconds: 1,
  }, { ...options, cells: [1] });
  deepStrictEqual(bare!.checks, ["Failed check(s):\nprefix: lost m3"]);
});

Deno.test("cells tier: a SKIP's kind comes from the report, never from its reason", () => {
  const [typed, untyped] = legOutcomes(run, {
    reports: [
      report(1, "SKIP", { reason: "default leg only: x", skipKind: "default-leg-only" }),
      report(2, "SKIP", { reason: "default leg only: y" }),
    ],
    code: 0,
    tail: "",
    seconds: 1,
  }, options);
  strictEqual(typed!.skipKind, "default-leg-only");
  strictEqual(untyped!.skipKind, undefined);
});

Deno.test("cells tier: a store on its own SQLite is labelled by what it runs, not the leg's library", () => {
  const own = { ...run, library: { label: "own", path: "/usr/lib/libsqlite3.so.0" } };
  const [outcome] = legOutcomes(own, {
    reports: [report(1, "PASS")],
    code: 0,
    tail: "",
    seconds: 1,
  }, {
    ...options,
    cells: [1],
    engine: { kind: "own-sqlite", sqliteVersion: "3.50.4" },
  });
  strictEqual(outcome!.library, "own");
  strictEqual(outcome!.sqliteVersion, "3.50.4");
  ok(!outcome!.replay!.includes("--libraries"), outcome!.replay);
});

Deno.test("cells tier: a store that never returns from a judging in the test run FAILs its cell, the rest not judged", () => {
  const stalled = {
    what: "opening the store on /e/cell2-x/store.db",
    since: 0,
    cell: 2,
    folder: "/e/cell2-x",
  };
  const outcomes = legOutcomes(
    run,
    { reports: [], code: null, tail: "", seconds: 130, stalled },
    { ...options, cells: [1, 2], judgingDeadlineMs: 120_000 },
  );
  deepStrictEqual(outcomes.map((o) => [o.cell, o.status]), [[1, "ERROR"], [2, "FAIL"]]);
  deepStrictEqual(outcomes.map((o) => o.evidence), [undefined, "/e/cell2-x"]);
  match(
    outcomes[1]!.reason!,
    /^The store never returned while opening the store on \/e\/cell2-x\/store.db \(judged in the test run's own process\): still running after 120 s/,
  );
  match(
    outcomes[0]!.reason!,
    /^Not judged: the test run was killed when the store never returned in cell 2/,
  );
});

Deno.test("cells tier: the cell whose store never opens or reads what its kill left FAILs at the judging deadline", async () => {
  const { runCells } = await import("./cells.ts");
  const { sqliteLibraryPath } = await import("../session_db/sqlite/database.ts");
  // An open that waits for the crashed life's pid file, and a read that does: each named.
  const cases = [
    [
      "stale_pidfile_target.ts",
      /^The store never returned while opening the store on \S+\/store\.db \(judged/,
    ],
    [
      "stale_reader_target.ts",
      /^The store never returned while getMessages on \S+\/store\.db \(judged/,
    ],
  ] as const;
  for (const [fixture, reason] of cases) {
    const tier = await runCells({
      target: new URL(`../cells/testdata/${fixture}`, import.meta.url).href,
      cells: [1],
      legs: ["delete"],
      libraries: [{ label: "system", path: sqliteLibraryPath() }],
      judgingDeadlineMs: 3000,
      env: { CELLS_SPAN: "0.25" },
    });
    const [cell1] = tier.results;
    deepStrictEqual(cell1?.status, "FAIL", JSON.stringify(tier.results));
    match(cell1!.reason!, reason);
    // The run folder of the state the store never returned on is kept, and named.
    ok(cell1!.evidence && exists(cell1!.evidence), JSON.stringify(cell1));
  }
});
