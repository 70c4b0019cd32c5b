// The sections of the bench's table: §1 durable appends (with their diagnostics), §2
// statement rates, §3 batch appends. Each runs its rounds and returns its rows.
import { median } from "../../../internal/stats.ts";
import { APPEND_SCENARIOS, type Config, type Sync } from "./_config.ts";
import type { StmtResult } from "./_jobs.ts";
import type { Lib, VariantKey } from "./_children.ts";
import type { TableRow } from "./_report.ts";
import type { Rates, Rounds } from "./_measure.ts";
import { pairRatio, resolution, spread, verdict } from "./_statistics.ts";

/** Where and on what the sections run. */
export interface SectionSetup {
  config: Readonly<Config>;
  rounds: Rounds;
  /** The work folder on disk. */
  work: string;
  /** A folder on tmpfs for the CPU-only rows, or undefined where there is none. */
  shm: string | undefined;
  /** The system SQLite's version (SessionDB and Python in §1 and §3). */
  systemSqlite: string;
  /** The fixed build's version, or undefined when it is not built. */
  fixedSqlite: string | undefined;
}

const med = (rates: Rates, v: VariantKey) => {
  const r = rates.get(v);
  return r?.length ? median(r) : undefined;
};
const rowSpread = (rates: Rates, vs: VariantKey[]) =>
  Math.max(0, ...vs.map((v) => spread(rates.get(v)) ?? 0)) || undefined;

/** Python with a Deno process's idle threads, against plain Python: the runtime's share. */
const threadsRow = (rates: Rates, version: string): TableRow => ({
  section: "1",
  benchmark: "  Python with 5 idle threads, as a Deno process has",
  oursLabel: `Python+threads ${version}`,
  ours: med(rates, "python-threads"),
  rounds: { ours: rates.get("python-threads"), python: rates.get("python") },
  python: med(rates, "python"),
  spread: rowSpread(rates, ["python-threads", "python"]),
  target: "(diagnostic)",
  result: "-",
});

/** A row of SessionDB or the bare binding on the system SQLite beside Python and node. */
const peerRow = (
  setup: SectionSetup,
  section: string,
  benchmark: string,
  rates: Rates,
  v: "sessiondb" | "binding",
  extra: Partial<TableRow> = {},
): TableRow => ({
  section,
  benchmark,
  oursLabel: `${v === "sessiondb" ? "SessionDB" : "binding"} ${setup.systemSqlite}`,
  ours: med(rates, v),
  rounds: { ours: rates.get(v), python: rates.get("python"), node: rates.get("node") },
  python: med(rates, "python"),
  node: med(rates, "node"),
  spread: rowSpread(rates, [v, "python", "node"]),
  target: "(diagnostic)",
  result: "-",
  ...extra,
});

const tmpfsRows = (setup: SectionSetup, section: string, rates: Rates): TableRow[] =>
  (["sessiondb", "binding"] as const).map((v) =>
    peerRow(
      setup,
      section,
      `  tmpfs (CPU only, fsync free)${v === "binding" ? ", bare binding" : ""}`,
      rates,
      v,
    )
  );

/** §2: the binding (on `bindingLib`) against node:sqlite, the same SQL. */
export async function statementSection(
  setup: SectionSetup,
  bindingLib: Lib,
  bindingSqlite: string,
): Promise<{ rows: TableRow[]; runs: Record<"binding" | "node", StmtResult[]> }> {
  const { config } = setup;
  const runs = await setup.rounds.statements(setup.work, bindingLib);
  const kilo = (n: number) => `${n / 1000}k`;
  const benchmarks: [string, "insertPerSec" | "pointPerSec" | "rangeRowsPerSec"][] = [
    [`INSERT ${kilo(config.stmtRows)} rows in 1 txn [rows/s]`, "insertPerSec"],
    [`point SELECT by rowid x${kilo(config.stmtPoints)} [rows/s]`, "pointPerSec"],
    [`100-row SELECT x${kilo(config.stmtRanges)} [rows/s]`, "rangeRowsPerSec"],
  ];
  const rows = benchmarks.map(([benchmark, key]): TableRow => {
    const b = runs.binding.map((r) => r[key]);
    const n = runs.node.map((r) => r[key]);
    return {
      section: "2",
      benchmark,
      oursLabel: `binding ${bindingSqlite}`,
      ours: median(b),
      rounds: { ours: b, node: n },
      node: median(n),
      spread: Math.max(spread(b) ?? 0, spread(n) ?? 0) || undefined,
      target: "node >= 0.8",
      result: verdict([["node", pairRatio(b, n), 0.8]]),
    };
  });
  return { rows, runs };
}

/**
 * §1: durable appends, one transaction each. The store's two policies run SessionDB
 * against Python and node:sqlite with the diagnostics of the same rounds (the fixed
 * build, the bare binding, Python with idle threads, Python against itself); a ratio to
 * Python just below 1.0 passes as parity when the A/A control cannot tell it apart.
 */
export async function durableSection(setup: SectionSetup): Promise<TableRow[]> {
  const rows: TableRow[] = [];
  for (const scenario of APPEND_SCENARIOS) {
    if (!scenario.store) rows.push(await extraScenarioRow(setup, scenario));
    else rows.push(...await storeScenarioRows(setup, scenario));
  }
  return rows;
}

type AppendScenario = typeof APPEND_SCENARIOS[number];

/** What SessionDB's durable appends must reach, against Python and node:sqlite. */
const DURABLE_TARGET = "Py >= 1.0, node >= 0.9";

/** A synchronous level the store has no option for: the store's SQL on the bare binding. */
async function extraScenarioRow(setup: SectionSetup, scenario: AppendScenario): Promise<TableRow> {
  const { config, rounds, work } = setup;
  const label = `${scenario.mode}/${scenario.sync}`;
  const base = { mode: scenario.mode, sync: scenario.sync, batch: 1 };
  const n = config.appends[label]!;
  const r = await rounds.appends(label, { ...base, n, warmup: config.warmup, dir: work }, [
    "binding",
    "python",
    "node",
  ]);
  return peerRow(setup, "1", `${label}, 1 append/txn (extra*) [appends/s]`, r, "binding", {
    txnPerSec: med(r, "binding"),
    target: "(info)",
  });
}

/** One of the store's policies: SessionDB's row, its diagnostics, and the tmpfs rows. */
async function storeScenarioRows(
  setup: SectionSetup,
  scenario: AppendScenario,
): Promise<TableRow[]> {
  const { config, rounds, work, shm, systemSqlite: sys } = setup;
  const label = `${scenario.mode}/${scenario.sync}`;
  const base = { mode: scenario.mode, sync: scenario.sync, batch: 1 };
  const n = config.appends[label]!;
  const r = await rounds.appends(label, { ...base, n, warmup: config.warmup, dir: work }, [
    "sessiondb",
    "python",
    "node",
    "sessiondb-fixed",
    "python-fixed",
    "binding",
    "python-threads",
    "python-control",
  ]);
  const control = resolution(r.get("python-control"), r.get("python"));
  const target = DURABLE_TARGET;
  const rows: TableRow[] = [
    peerRow(setup, "1", `${label}, 1 append/txn [appends/s]`, r, "sessiondb", {
      txnPerSec: med(r, "sessiondb"),
      target,
      result: verdict([
        ["Py", pairRatio(r.get("sessiondb"), r.get("python")), 1.0, control],
        ["node", pairRatio(r.get("sessiondb"), r.get("node")), 0.9],
      ]),
    }),
  ];
  if (setup.fixedSqlite !== undefined) rows.push(fixedRow(setup.fixedSqlite, r, control));
  rows.push(
    peerRow(setup, "1", "  same SQL on the bare binding", r, "binding", {
      txnPerSec: med(r, "binding"),
    }),
  );
  rows.push(threadsRow(r, sys));
  rows.push({
    ...threadsRow(r, sys),
    benchmark: "  Python against itself (A/A control: the resolution)",
    oursLabel: `Python ${sys}`,
    ours: med(r, "python-control"),
    rounds: { ours: r.get("python-control"), python: r.get("python") },
    spread: rowSpread(r, ["python-control", "python"]),
    target: control?.spread === undefined
      ? "(diagnostic)"
      : `(ratio spread ${(control.spread * 100).toFixed(1)}%)`,
  });
  if (shm) {
    const t = await rounds.appends(
      `${label} tmpfs`,
      { ...base, n: config.tmpfsAppends[scenario.mode], warmup: config.warmup * 5, dir: shm },
      ["sessiondb", "python", "node", "binding", "python-threads"],
    );
    rows.push(...tmpfsRows(setup, "1", t));
    rows.push({ ...threadsRow(t, sys), benchmark: "  tmpfs, Python with 5 idle threads" });
  }
  return rows;
}

/** SessionDB and Python on the fixed build (node's SQLite version), against node. */
function fixedRow(
  fixedSqlite: string,
  r: Rates,
  control: ReturnType<typeof resolution>,
): TableRow {
  const fixed = med(r, "sessiondb-fixed");
  return {
    section: "1",
    benchmark: "  same, SessionDB on node's SQLite version",
    oursLabel: `SessionDB ${fixedSqlite}`,
    ours: fixed,
    rounds: {
      ours: r.get("sessiondb-fixed"),
      python: r.get("python-fixed"),
      node: r.get("node"),
    },
    python: med(r, "python-fixed"),
    node: med(r, "node"),
    spread: rowSpread(r, ["sessiondb-fixed", "python-fixed", "node"]),
    txnPerSec: fixed,
    target: DURABLE_TARGET,
    result: verdict([
      ["Py", pairRatio(r.get("sessiondb-fixed"), r.get("python-fixed")), 1.0, control],
      ["node", pairRatio(r.get("sessiondb-fixed"), r.get("node")), 0.9],
    ]),
  };
}

/** §3: 100-message batches per transaction, in each journal mode. */
export async function batchSection(setup: SectionSetup): Promise<TableRow[]> {
  const { config, rounds, work, shm } = setup;
  const rows: TableRow[] = [];
  for (const mode of ["delete", "wal"] as const) {
    const sync: Sync = mode === "wal" ? "FULL" : "EXTRA";
    const label = `${mode}/${sync} x${config.batchSize}`;
    const base = { mode, sync, batch: config.batchSize, warmup: config.batchWarmup };
    const r = await rounds.appends(label, { ...base, n: config.batches[mode], dir: work }, [
      "sessiondb",
      "python",
      "node",
      "binding",
    ]);
    const ours = med(r, "sessiondb");
    rows.push(
      peerRow(
        setup,
        "3",
        `${mode}/${sync}, ${config.batchSize} msgs/txn [msgs/s]`,
        r,
        "sessiondb",
        {
          txnPerSec: ours === undefined ? undefined : ours / config.batchSize,
          target: "(info)",
        },
      ),
      peerRow(setup, "3", "  same SQL on the bare binding", r, "binding"),
    );
    if (shm) {
      const t = await rounds.appends(
        `${label} tmpfs`,
        { ...base, n: config.tmpfsBatches, dir: shm },
        ["sessiondb", "python", "node", "binding"],
      );
      rows.push(...tmpfsRows(setup, "3", t));
    }
  }
  return rows;
}
