/**
 * Merges conformance reports from several machines (OS × file system × SQLite build)
 * into one: every result keyed by its machine, the level recomputed over them all.
 *
 * @example
 * ```ts ignore
 * import { mergeReports, parseReport } from "./merge.ts";
 * const reports = ["a.json", "b.json"].map((f) => parseReport(f, Deno.readTextFileSync(f)));
 * console.log(mergeReports(reports, "merge").level);
 * ```
 *
 * @module
 */
import { levelOf } from "./levels.ts";
import {
  type ConformanceReport,
  countStatuses,
  REPORT_SCHEMA,
  REPORT_SCHEMA_VERSION,
  verdictOf,
} from "./report_schema.ts";

/** A report that cannot be merged: a usage error naming the file and the fix. */
export class MergeError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "MergeError";
  }
}

/**
 * Parses one report for merging, checking its schema and version.
 *
 * @param path The file, for messages.
 * @param text Its text.
 * @returns The report.
 * @throws {MergeError} When it is not JSON, not a conformance report, or another version.
 */
export function parseReport(path: string, text: string): ConformanceReport {
  let data: Partial<ConformanceReport>;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new MergeError(
      `Cannot merge ${path}: not JSON (${
        (error as Error).message
      }): pass the report.json a conformance run wrote`,
      { cause: error },
    );
  }
  if (data?.schema !== REPORT_SCHEMA || !Array.isArray(data.results) || !data.machines?.length) {
    throw new MergeError(
      `Cannot merge ${path}: not a conformance report (no "schema": "${REPORT_SCHEMA}"): pass the report.json a conformance run wrote`,
    );
  }
  if (data.version !== REPORT_SCHEMA_VERSION) {
    throw new MergeError(
      `Cannot merge ${path}: report version ${data.version}, this tool reads ${REPORT_SCHEMA_VERSION}: rerun it with this version of the suite`,
    );
  }
  return data as ConformanceReport;
}

/**
 * Merges reports: results, tiers and capabilities keyed by machine (a machine id seen
 * twice gets `#2`, `#3`, …), the level recomputed over every machine's results (so the
 * merged level is reached only where every machine reaches it), FAIL if any run failed.
 *
 * @param reports The parsed reports.
 * @param command The merge's command line.
 * @returns The merged report.
 * @throws {MergeError} When none is given or they are about different targets.
 */
export function mergeReports(
  reports: readonly ConformanceReport[],
  command: string,
): ConformanceReport {
  if (!reports.length) {
    throw new MergeError("Cannot merge: no reports given (pass a.json b.json …)");
  }
  const targets = new Set(reports.map((r) => r.target.replace(/^.*\//, "")));
  if (targets.size > 1) {
    throw new MergeError(
      `Cannot merge reports about different targets: ${
        [...targets].join(", ")
      } (merge one target's reports)`,
    );
  }
  const seen = new Map<string, number>();
  const merged: ConformanceReport = {
    schema: REPORT_SCHEMA,
    version: REPORT_SCHEMA_VERSION,
    level: "NONE",
    verdict: "PASS",
    target: reports[0]!.target,
    date: new Date().toISOString(),
    command,
    strict: reports.some((r) => r.strict),
    quick: reports.some((r) => r.quick),
    machines: [],
    capabilities: {},
    tiers: [],
    results: [],
    counts: countStatuses([]),
  };
  const expectations = new Set<string>();
  for (const report of reports) {
    for (const machine of report.machines) {
      const n = (seen.get(machine.id) ?? 0) + 1;
      seen.set(machine.id, n);
      const id = n === 1 ? machine.id : `${machine.id}#${n}`;
      merged.machines.push({ ...machine, id });
      const caps = report.capabilities[machine.id];
      if (caps) merged.capabilities[id] = caps;
      const single = report.machines.length === 1;
      const mine = <T extends { machine?: string }>(x: T) => single || x.machine === machine.id;
      merged.tiers.push(...report.tiers.filter(mine).map((t) => ({ ...t, machine: id })));
      merged.results.push(...report.results.filter(mine).map((r) => ({ ...r, machine: id })));
    }
    if (report.expectations) expectations.add(report.expectations);
  }
  if (expectations.size) merged.expectations = [...expectations].join(", ");
  const verdict = levelOf(merged.results, merged.tiers);
  merged.level = verdict.level;
  if (verdict.next) merged.next = verdict.next;
  merged.counts = countStatuses(merged.results);
  const { verdict: overall, why } = verdictOf(merged.results, merged.strict, merged.tiers);
  merged.verdict = overall;
  if (why) merged.why = why;
  // A run that left processes running failed, wherever it ran.
  const survivors = reports.flatMap((r) => r.survivors ?? []);
  if (survivors.length) {
    merged.survivors = survivors;
    if (overall !== "FAIL") {
      merged.verdict = "FAIL";
      merged.why = `${survivors.length} process(es) outlived a merged run`;
    }
  }
  return merged;
}
