// The bench's report: the rows of its tables, how they print, and CPU per message.
import { median } from "../../../internal/stats.ts";
import type { AppendResult } from "./_jobs.ts";
import type { VariantKey } from "./_children.ts";
import { pairRatio, ratio } from "./_statistics.ts";
import { columns } from "../../_table.ts";

/** A row of the §1-§3 table: ours beside Python and node:sqlite. */
export interface TableRow {
  section: string;
  benchmark: string;
  oursLabel: string;
  ours?: number | undefined;
  python?: number | undefined;
  node?: number | undefined;
  /** The largest (max - min) / median over the row's implementations' rounds. */
  spread?: number | undefined;
  /** Each round's rate, for ratios pair by pair. */
  rounds?: {
    ours?: number[] | undefined;
    python?: number[] | undefined;
    node?: number[] | undefined;
  };
  /** Commits per second, for fsync/txn. */
  txnPerSec?: number | undefined;
  fsyncsPerTxn?: number | undefined;
  target: string;
  result: string;
}

/** A row of the §4 table: one figure, its target and verdict. */
export interface SuiteRow {
  benchmark: string;
  value?: number | undefined;
  unit: string;
  target: string;
  result: string;
  detail: string;
}

/** The rounds of one variant in one append scenario. */
export interface AppendRun {
  label: string;
  variant: VariantKey;
  /** Messages per second of each round. */
  rates: number[];
  results: AppendResult[];
}

/** A whole number with thousands separators, `-` when unknown. */
export const fmt = (value: number | undefined): string =>
  value === undefined || !Number.isFinite(value) ? "-" : Math.round(value).toLocaleString("en-US");
const fmtRatio = (r: number | undefined): string => (r === undefined ? "-" : `${r.toFixed(2)}x`);

/** A row's ratio to a peer: pair by pair when the rounds are known. */
export function rowRatio(r: TableRow, peer: "python" | "node"): number | undefined {
  if (r[peer] === undefined) return undefined;
  return r.rounds ? pairRatio(r.rounds.ours, r.rounds[peer]) : ratio(r.ours, r[peer]);
}

/** Prints the §1-§3 table, a blank line between sections. */
export function printTable(rows: TableRow[]): void {
  const header = [
    "#",
    "benchmark",
    "ours",
    "ours/s",
    "Python/s",
    "node/s",
    "ours/Py",
    "ours/node",
    "spread",
    "fsync/txn",
    "target",
    "result",
  ];
  const cells = rows.map((r) => [
    r.section,
    r.benchmark,
    r.oursLabel,
    fmt(r.ours),
    fmt(r.python),
    fmt(r.node),
    fmtRatio(rowRatio(r, "python")),
    fmtRatio(rowRatio(r, "node")),
    r.spread === undefined ? "-" : `${Math.round(r.spread * 100)}%`,
    r.fsyncsPerTxn === undefined ? "-" : r.fsyncsPerTxn.toFixed(1),
    r.target,
    r.result,
  ]);
  const numeric = new Set([3, 4, 5, 6, 7, 8, 9]);
  const [head, rule, ...body] = columns(header, cells, { numeric });
  console.log(head);
  console.log(rule);
  for (const [i, line] of body.entries()) {
    if (i > 0 && rows[i]!.section !== rows[i - 1]!.section) console.log("");
    console.log(line);
  }
}

/** Prints the §4 table. */
export function printSuiteTable(rows: SuiteRow[]): void {
  const header = ["#", "benchmark", "value", "target", "result", "detail"];
  const cells = rows.map((r) => [
    "4",
    r.benchmark,
    r.value === undefined || !Number.isFinite(r.value)
      ? "-"
      : `${r.value < 100 ? r.value.toFixed(1) : Math.round(r.value)} ${r.unit}`,
    r.target,
    r.result,
    r.detail,
  ]);
  for (const line of columns(header, cells, { numeric: new Set([2]) })) console.log(line);
}

/**
 * CPU per message (user + system of the appending process, median over rounds), by
 * scenario and variant: the part of an append the disk does not explain.
 */
export function cpuPerMessageUs(runs: AppendRun[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const run of runs) {
    const cpu = run.results.filter((r) => r.cpuSeconds !== undefined).map((r) =>
      r.cpuSeconds! / r.messages * 1e6
    );
    if (cpu.length) (out[run.label] ??= {})[run.variant] = median(cpu);
  }
  return out;
}

/** Prints CPU per message, one line per scenario. */
export function printCpuPerMessage(cpu: Record<string, Record<string, number>>): void {
  console.log("CPU per message [µs, user + system of the appending process, median]:");
  for (const [label, byVariant] of Object.entries(cpu)) {
    console.log(
      `  ${label.padEnd(24)} ${
        Object.entries(byVariant).map(([v, us]) => `${v} ${us.toFixed(1)}`).join(", ")
      }`,
    );
  }
}
