// The one table every tool prints: results fit the terminal (120 columns when stdout is
// not one), identical SKIPs grouped on one line, and every FAIL or ERROR followed by its
// failed checks, its diagnoses, its replay command and its evidence. The JSON keeps the rest.
import type { Diagnosis } from "../cells/engine/report.ts";
import { oneLine } from "../runner/report_formats.ts";
import { observedResults, type Verdict, verdictOf } from "../runner/report_schema.ts";
import type { Outcome, TierOutcome, TierRun } from "../runner/result.ts";
import { type Survivor, survivorsMessage } from "../harness/process_tree.ts";

export { oneLine };

/** What the table shows of a result (an engine outcome, or one after the manifest). */
export interface TableRow {
  /** The clause, e.g. `1 prefix durability`. */
  clause: string;
  /** Its cell. */
  cell?: number;
  /** Its tier. */
  tier: string;
  /** Its leg. */
  leg: string;
  /** Its library label. */
  library: string;
  /** Its SQLite version. */
  sqliteVersion?: string;
  /** PASS, FAIL, SKIP, ERROR, XFAIL or XPASS. */
  status: string;
  /** The whole reason. */
  reason?: string;
  /** The failed checks. */
  checks?: string[];
  /** Known patterns with cause and fix. */
  diagnoses?: Diagnosis[];
  /** The replay command. */
  replay?: string;
  /** The evidence folder. */
  evidence?: string;
  /** The figures. */
  figures?: Record<string, unknown>;
  /** How many states, programs or kills were judged. */
  judged?: number;
  /** The repetition. */
  run?: number;
  /** The machine (merged reports). */
  machine?: string;
  /** The manifest entry that matched. */
  expectation?: { reason: string };
}

/** How wide the output may be: the terminal's columns, else 120. */
export function terminalWidth(): number {
  try {
    if (Deno.stdout.isTerminal()) return Math.max(40, Deno.consoleSize().columns);
  } catch { /* not a terminal */ }
  return 120;
}

/** `text` on one line within `width` characters, cut with an ellipsis. */
export function cut(text: string, width: number): string {
  const line = text.replace(/\s*\n\s*/g, " | ");
  return line.length > width ? `${line.slice(0, Math.max(0, width - 1))}…` : line;
}

/** A PASS's figures in a few words. */
function figuresText(row: TableRow): string {
  const f = row.figures ?? {};
  const parts: string[] = [];
  if (f.onDiskMode) parts.push(`on-disk ${f.onDiskMode}`);
  if (f.acknowledged !== undefined) parts.push(`ack ${f.acknowledged}`);
  if (f.recovered !== undefined) parts.push(`recovered ${f.recovered}`);
  if (typeof f.sigkills === "number") parts.push(`${f.sigkills} SIGKILLs`);
  if (Array.isArray(f.crashPoints)) parts.push(`${f.crashPoints.length} crash points`);
  if (Array.isArray(f.exitCodes)) parts.push(`exits ${f.exitCodes.join(",")}`);
  if (row.judged !== undefined) parts.push(`${row.judged} judged`);
  if (typeof f.tornStates === "number") parts.push(`${f.tornStates} torn`);
  if (typeof f.resumes === "number") parts.push(`${f.resumes} resumes`);
  return parts.join(", ");
}

function detailOf(row: TableRow): string {
  if (row.status === "PASS") return figuresText(row);
  if (row.status === "XFAIL" || row.status === "XPASS") {
    return `expected: ${row.expectation?.reason ?? "?"}`;
  }
  return oneLine(row.checks?.[0] ?? row.reason ?? "", 10_000);
}

const skipKey = (row: TableRow) => `${row.tier}\u0000${oneLine(row.reason ?? "", 10_000)}`;
const distinct = (values: readonly string[]) => [...new Set(values)].join(",");

/** One line for a group of SKIPs with one reason: `7 cells × wal × system: SKIP: <why>`. */
function skipLine(rows: readonly TableRow[], showTier: boolean, width: number): string {
  const cells = [...new Set(rows.filter((r) => r.cell !== undefined).map((r) => r.cell!))];
  const first = rows[0]!;
  let what = cells.length
    ? cells.length === 1 ? `cell ${cells[0]}` : `${cells.length} cells`
    : rows.length === 1
    ? first.clause
    : `${rows.length} results`;
  const runs = new Set(rows.map((r) => r.run).filter((run) => run !== undefined));
  if (runs.size > 1) what += ` in ${runs.size} runs`;
  if (showTier && first.tier !== "cells") what = `${first.tier} ${what}`;
  const where = `${distinct(rows.map((r) => r.leg))} × ${distinct(rows.map((r) => r.library))}`;
  return cut(
    `${what} × ${where}: SKIP: ${oneLine(first.reason ?? "no reason given", 10_000)}`,
    width,
  );
}

/** The lines after a FAIL or ERROR: checks, diagnoses, replay and evidence. */
function failureBlock(row: TableRow, showTier: boolean, width: number): string[] {
  const version = row.sqliteVersion ? ` (SQLite ${row.sqliteVersion})` : "";
  const at = [
    showTier ? row.tier : "",
    row.run !== undefined ? `run ${row.run}` : "",
    row.machine ?? "",
  ].filter(Boolean).join(" · ");
  const lines = [
    cut(
      `${row.status} ${row.clause} × ${row.leg} × ${row.library}${version}${at ? ` · ${at}` : ""}`,
      width,
    ),
  ];
  const checks = row.checks?.length ? row.checks : [row.reason ?? "no reason given"];
  for (const check of checks.slice(0, 10)) lines.push(cut(`  check: ${check}`, width));
  if (checks.length > 10) lines.push(`  … ${checks.length - 10} more checks in the JSON report`);
  for (const d of row.diagnoses ?? []) {
    lines.push(cut(`  cause: ${d.cause}`, width), cut(`  fix: ${d.fix}`, width));
  }
  // Whole, however long: a command or a path cut short is of no use.
  if (row.replay) lines.push(`  replay: ${row.replay}`);
  if (row.evidence) lines.push(`  evidence: ${row.evidence}`);
  return lines;
}

/**
 * Columns padded to their widest cell (numbers to the right), a rule under the header,
 * within `width`: the last column is cut with an ellipsis first, then the first.
 *
 * @param head The header.
 * @param rows The cells.
 * @param options The widest line (default: no limit) and the numeric columns.
 * @returns The lines.
 */
export function columns(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  options: { width?: number; numeric?: ReadonlySet<number> } = {},
): string[] {
  const width = options.width ?? Infinity;
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const total = () => widths.reduce((a, b) => a + b + 2, -2);
  const last = widths.length - 1;
  if (total() > width) widths[last] = Math.max(8, widths[last]! - (total() - width));
  if (total() > width) widths[0] = Math.max(12, widths[0]! - (total() - width));
  const line = (cells: readonly string[]) =>
    cut(
      cells.map((c, i) => {
        const text = cut(c, widths[i]!);
        return options.numeric?.has(i) ? text.padStart(widths[i]!) : text.padEnd(widths[i]!);
      }).join("  ").trimEnd(),
      width,
    );
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)];
}

/** Options of {@linkcode renderTable}. */
export interface TableOptions {
  /** The widest line (default {@linkcode terminalWidth}). */
  width?: number;
  /** Whether to show the tier column (several tiers). */
  tier?: boolean;
  /** Whether to show the SQLite column (default true). */
  sqlite?: boolean;
}

/**
 * The table of results: one row per PASS, FAIL, ERROR, XFAIL or XPASS (the detail cut to
 * fit), one line per group of identical SKIPs, then each FAIL's and ERROR's block.
 *
 * @param rows The results, in order.
 * @param options Width and columns.
 * @returns The text.
 */
export function renderTable(rows: readonly TableRow[], options: TableOptions = {}): string {
  const width = options.width ?? terminalWidth();
  const showTier = options.tier ?? false;
  const head = [
    "clause",
    ...(showTier ? ["tier"] : []),
    "leg",
    "library",
    ...(options.sqlite === false ? [] : ["SQLite"]),
    "result",
    "detail",
  ];
  const shown = rows.filter((r) => r.status !== "SKIP");
  const body = shown.map((r) => [
    `${r.clause}${r.run !== undefined ? ` #${r.run}` : ""}${r.machine ? ` @${r.machine}` : ""}`,
    ...(showTier ? [r.tier] : []),
    r.leg,
    r.library,
    ...(options.sqlite === false ? [] : [r.sqliteVersion ?? ""]),
    r.status,
    detailOf(r),
  ]);
  const out = shown.length ? columns(head, body, { width }) : [];
  const groups = new Map<string, TableRow[]>();
  for (const row of rows.filter((r) => r.status === "SKIP")) {
    groups.set(skipKey(row), [...groups.get(skipKey(row)) ?? [], row]);
  }
  if (groups.size) out.push(...[...groups.values()].map((g) => skipLine(g, showTier, width)));
  for (const row of rows.filter((r) => r.status === "FAIL" || r.status === "ERROR")) {
    out.push("", ...failureBlock(row, showTier, width));
  }
  return out.join("\n");
}

/** The 1-minute load average (the machine may be shared), or `?`. */
export function loadAverage(): string {
  try {
    return Deno.loadavg()[0]!.toFixed(2);
  } catch {
    return "?";
  }
}

/**
 * A tool's verdict on its run, by the conformance report's rules (`verdictOf`): FAIL on
 * a failure or on a process the run left running, ERROR when the suite failed, SKIP when
 * nothing was judged (a PASS that judged nothing is a SKIP), else PASS; with why unless
 * PASS.
 *
 * @param outcomes The outcomes.
 * @param runs How the tiers went (named when every one was skipped).
 * @param survivors What the run left running (its run scope's reap).
 * @returns The verdict.
 */
export function toolVerdict(
  outcomes: readonly Outcome[],
  runs: readonly TierRun[] = [],
  survivors: readonly Survivor[] = [],
): { verdict: Verdict; why?: string } {
  const verdict = verdictOf(observedResults(outcomes), false, runs);
  if (!survivors.length || verdict.verdict === "FAIL") return verdict;
  return { verdict: "FAIL", why: survivorsMessage(survivors, "the run") };
}

/**
 * The verdict line of a tier of states (the sweep, the power-loss cells): states judged
 * in the wall time, the rate, the load, torn states and resumes, the seed, and the
 * verdict with why: `<name>: N states in S s (R states/s; load average L): T torn
 * states, R resumes judged, seed S: PASS`.
 *
 * @param name The command, e.g. `sweep --syscalls`.
 * @param tier The tier's outcome.
 * @param run The wall time, and what the run left running.
 * @returns The line and the verdict.
 */
export function statesVerdict(
  name: string,
  tier: TierOutcome,
  run: { seconds: number; survivors?: readonly Survivor[] },
): { line: string; verdict: Verdict } {
  const { seconds, survivors = [] } = run;
  const sum = (f: (r: Outcome) => number) => tier.results.reduce((n, r) => n + f(r), 0);
  const states = sum((r) => r.judged ?? 0);
  const torn = sum((r) => Number(r.figures?.tornStates ?? 0));
  const resumes = sum((r) => Number(r.figures?.resumes ?? 0));
  const seeds = [...new Set(tier.results.flatMap((r) => r.seed === undefined ? [] : [r.seed]))];
  const { verdict, why } = toolVerdict(tier.results, [tier.run], survivors);
  const rate = seconds > 0 ? (states / seconds).toFixed(1) : "0";
  return {
    verdict,
    line: `${name}: ${states} states in ${
      seconds.toFixed(1)
    } s (${rate} states/s; load average ${loadAverage()}): ${torn} torn states, ${resumes} resumes judged${
      seeds.length ? `, seed ${seeds.join(",")}` : ""
    }: ${verdict}${why ? ` (${why})` : ""}`,
  };
}
