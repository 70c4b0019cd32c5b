// How the sweep and the power-loss cells print their typed results: a table that fits the
// terminal (120 columns when not a TTY), identical SKIPs grouped on one line, each FAIL
// with its checks one per line, the known pattern's cause and fix, the replay command and
// the evidence; then one verdict line. The full detail stays in the JSON report.
import type { Outcome, TierOutcome } from "../../runner/result.ts";

/** The overall verdict: FAIL on any FAIL or ERROR, SKIP when nothing was judged, else PASS. */
export function verdictOf(tier: TierOutcome): { status: "PASS" | "FAIL" | "SKIP"; why?: string } {
  const bad = tier.results.filter((r) => r.status === "FAIL" || r.status === "ERROR");
  if (bad.length) return { status: "FAIL", why: `${bad.length} failing` };
  const judged = tier.results.reduce((n, r) => n + (r.judged ?? 0), 0);
  if (tier.run.status === "SKIP" || judged === 0) {
    return { status: "SKIP", why: tier.run.reason ?? tier.results[0]?.reason ?? "nothing judged" };
  }
  return { status: "PASS" };
}

function width(): number {
  try {
    return Deno.stdout.isTerminal() ? Deno.consoleSize().columns : 120;
  } catch {
    return 120;
  }
}

function cut(text: string, max: number): string {
  const line = text.split("\n")[0]!;
  return line.length <= max ? line : `${line.slice(0, Math.max(0, max - 1))}…`;
}

/** A figure of an outcome, or `-`. */
function figure(r: Outcome, name: string): string {
  const value = r.figures?.[name];
  return typeof value === "number" ? String(value) : "-";
}

/**
 * The results' table: clause, leg, library, status, states judged, torn states, resumes,
 * and the first line of why; SKIPs with one reason grouped on one line below it.
 *
 * @param results The outcomes.
 * @returns The lines.
 */
export function resultTable(results: readonly Outcome[]): string[] {
  const shown = results.filter((r) => r.status !== "SKIP");
  const head = ["clause", "leg", "library", "status", "judged", "torn", "resumes", "why"];
  const rows = shown.map((r) => [
    r.clause,
    r.leg,
    r.library,
    r.status,
    String(r.judged ?? 0),
    figure(r, "tornStates"),
    figure(r, "resumes"),
    r.reason ?? "",
  ]);
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.slice(0, 200).map((row) => row[i]!.length))
  );
  const fixed = widths.slice(0, -1).reduce((a, b) => a + b + 2, 0);
  widths[7] = Math.max(10, Math.min(widths[7]!, width() - fixed));
  const line = (cells: string[]) =>
    cells.map((c, i) => i === 7 ? cut(c, widths[7]!) : c.padEnd(widths[i]!)).join("  ").trimEnd();
  const lines = shown.length ? [line(head), ...rows.map(line)] : [];
  const skips = new Map<string, Outcome[]>();
  for (const r of results.filter((r) => r.status === "SKIP")) {
    const why = r.reason ?? "skipped";
    skips.set(why, [...skips.get(why) ?? [], r]);
  }
  for (const [why, list] of skips) {
    const where = list.length > 3
      ? `${list.length} results`
      : list.map((r) => `${r.clause} · ${r.leg} · ${r.library}`).join("; ");
    lines.push(cut(`SKIP (${where}): ${why}`, width()));
  }
  return lines;
}

/**
 * A FAIL's (or ERROR's) detail: its checks one per line, each known pattern's cause and
 * fix, the replay command and the evidence folder.
 *
 * @param r The outcome.
 * @returns The lines.
 */
export function failureLines(r: Outcome): string[] {
  const checks = r.checks?.length ? r.checks : [r.reason ?? "failed"];
  return [
    `${r.status} ${r.clause} · ${r.leg} · ${r.library}:`,
    ...checks.flatMap((c) => c.split("\n")).map((c) => `  ${c}`),
    // A pattern the check itself already names is not repeated.
    ...(r.diagnoses ?? []).filter((d) => !checks.some((c) => c.includes(`(${d.pattern})`)))
      .flatMap((d) => [`  cause (${d.pattern}): ${d.cause}`, `  fix: ${d.fix}`]),
    ...(r.replay ? [`  replay: ${r.replay}`] : []),
    ...(r.evidence ? [`  evidence: ${r.evidence}`] : []),
  ];
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
 * The verdict line: states judged (torn, resumes), wall time, rate, the load, the seed,
 * and PASS, FAIL or SKIP with why; `N states in S s (R states/s` leads the figures.
 *
 * @param name The command, e.g. `sweep --syscalls`.
 * @param tier The tier's outcome.
 * @param seconds Wall time.
 * @returns The line.
 */
export function verdictLine(name: string, tier: TierOutcome, seconds: number): string {
  const sum = (f: (r: Outcome) => number) => tier.results.reduce((n, r) => n + f(r), 0);
  const states = sum((r) => r.judged ?? 0);
  const torn = sum((r) => Number(r.figures?.tornStates ?? 0));
  const resumes = sum((r) => Number(r.figures?.resumes ?? 0));
  const seeds = [...new Set(tier.results.map((r) => r.seed).filter((s) => s !== undefined))];
  const verdict = verdictOf(tier);
  return `${name}: ${states} states in ${seconds.toFixed(1)} s (${
    seconds > 0 ? (states / seconds).toFixed(1) : "0"
  } states/s; load average ${loadAverage()}): ${torn} torn states, ${resumes} resumes judged${
    seeds.length ? `, seed ${seeds.join(",")}` : ""
  }: ${verdict.status}${verdict.why ? ` (${verdict.why})` : ""}`;
}

/**
 * Prints a tier's results: the table, every FAIL's detail, the verdict line.
 *
 * @param name The command, e.g. `sweep --syscalls`.
 * @param tier The tier's outcome.
 * @param seconds Wall time.
 * @returns The exit code: 0 on PASS, 1 on FAIL or SKIP.
 */
export function printTier(name: string, tier: TierOutcome, seconds: number): number {
  console.log("");
  for (const line of resultTable(tier.results)) console.log(line);
  for (const r of tier.results.filter((r) => r.status === "FAIL" || r.status === "ERROR")) {
    console.log("");
    for (const line of failureLines(r)) console.log(line);
  }
  console.log("");
  console.log(verdictLine(name, tier, seconds));
  return verdictOf(tier).status === "PASS" ? 0 : 1;
}
