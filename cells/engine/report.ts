/**
 * How a cell that holds on the default leg only (its clause does not depend on the
 * journal mode) begins its SKIP reason on the other legs, for people; readers that act on
 * it (the conformance levels) read the report's {@linkcode SkipKind} instead.
 *
 * @example
 * ```ts
 * import { DEFAULT_LEG_ONLY } from "./report.ts";
 * const reason = `${DEFAULT_LEG_ONLY}: by design`;
 * console.log(reason.startsWith(DEFAULT_LEG_ONLY)); // true
 * ```
 */
export const DEFAULT_LEG_ONLY = "default leg only";

/**
 * What kind of SKIP a result is, set by the code that skips, for the readers that act on
 * it (the conformance levels); the reason beside it is for people and is never parsed.
 *
 * - `default-leg-only`: the cell's clause does not depend on the journal mode, so it runs
 *   on the default leg only (it must pass there instead);
 * - `no-crash-points`: the target declares no crash points, so the sweep of named points
 *   has nothing to move through (the file-system call tier crashes it instead);
 * - `judged-on-twin`: under `--quick`, a cell left to a leg that ran in the very on-disk
 *   mode: for the default leg, the leg asked for by name on the same library; for a leg on a
 *   later library, the same leg on an earlier one (the runner sets it, no cell).
 *
 * @example
 * ```ts
 * import type { SkipKind } from "./report.ts";
 * const kind: SkipKind = "default-leg-only";
 * ```
 */
export type SkipKind = "default-leg-only" | "no-crash-points" | "judged-on-twin";

/**
 * The one status vocabulary of every judged result: a cell's report, a tier's outcome
 * (`runner/result.ts`), a conformance result's observed status and a run's verdict
 * (`runner/report_schema.ts`, whose `ResultStatus` refines it with `XFAIL` and `XPASS`
 * after an expectations manifest). `ERROR` is the suite's own failure (a `HarnessError`
 * from `harness/`: a kill that did not land, a plan the run did not follow): never a verdict
 * on the store, never a PASS and never a mutant caught.
 *
 * @example
 * ```ts
 * import type { Status } from "./report.ts";
 * const judged = (status: Status) => status === "PASS" || status === "FAIL";
 * console.log(judged("ERROR")); // false
 * ```
 */
export type Status = "PASS" | "FAIL" | "SKIP" | "ERROR";

/**
 * What a store really runs on, read from evidence rather than from the leg's settings.
 *
 * - `binding`: SQLite through this project's FFI binding, on the leg's library (the
 *   library axis applies);
 * - `own-sqlite`: a SQLite the store brings (`node:sqlite`, Deno KV, libSQL, a worker in
 *   another language): the leg's library is never loaded, so there is no library axis;
 * - `not-sqlite`: the store's file is not SQLite (the journal-mode legs do not apply);
 * - `unknown`: not observed (the store could not open).
 *
 * @example
 * ```ts
 * import type { StoreEngine } from "./report.ts";
 * const kv: StoreEngine = { kind: "own-sqlite", sqliteVersion: "3.53.2" };
 * console.log(kv.library ?? "no library of ours"); // "no library of ours"
 * ```
 */
export interface StoreEngine {
  /** Which kind of engine. */
  kind: "binding" | "own-sqlite" | "not-sqlite" | "unknown";
  /** The SQLite version: the library's, or the last writer's from the file header. */
  sqliteVersion?: string;
  /** The SQLite library the store loaded (only when it did). */
  library?: string;
  /** Programs the store's children ran (declared in `childPermissions.run`). */
  programs?: string[];
}

/**
 * A known failure pattern recognised in a FAIL: its cause and its fix, one line each.
 *
 * @example
 * ```ts
 * import type { Diagnosis } from "./report.ts";
 * const d: Diagnosis = {
 *   pattern: "ack-before-commit",
 *   cause: "the store acknowledges an append before its COMMIT returned",
 *   fix: "return the row id only after COMMIT returned",
 * };
 * console.log(`${d.cause}; fix: ${d.fix}`);
 * ```
 */
export interface Diagnosis {
  /** A stable id of the pattern, e.g. `delete-full-power-loss`. */
  pattern: string;
  /** Why such a store fails, one line. */
  cause: string;
  /** What to change, one line. */
  fix: string;
}

/**
 * A cell's outcome, as written to the report directory.
 *
 * @example
 * ```ts
 * import type { CellReport } from "./report.ts";
 * function line(report: CellReport): string {
 *   const why = report.reason ? ` (${report.reason})` : "";
 *   return `cell ${report.cell} ${report.title}, ${report.leg} leg: ${report.status}${why}`;
 * }
 * ```
 */
export interface CellReport {
  /** The cell number. */
  cell: number;
  /** Its title. */
  title: string;
  /** The target. */
  target: string;
  /** The leg name. */
  leg: string;
  /** The SQLite version. */
  sqliteVersion: string;
  /** The library path. */
  library: string;
  /** PASS, FAIL, SKIP or ERROR. */
  status: Status;
  /** Why it failed, erred or was skipped (the whole text, children's stderr included). */
  reason?: string;
  /** A SKIP's kind, when a reader may act on it (the reason is for people). */
  skipKind?: SkipKind;
  /** A FAIL's or ERROR's failed checks, one line each: `<check>: <expected and found>`. */
  checks?: string[];
  /** Known failure patterns the failed checks match, each with a cause and a fix. */
  diagnoses?: Diagnosis[];
  /** A command line that replays this run (its seed included). */
  replay?: string;
  /** What the store really ran on, observed by the leg probe. */
  engine?: StoreEngine;
  /** Evidence figures. */
  figures: Record<string, unknown>;
  /** The flags the target's children got beyond the narrow scope (its `childPermissions`). */
  childPermissions?: string[];
  /** Where the evidence was kept. */
  evidence?: string;
}

/**
 * The cells' reports in a report folder (`CELLS_REPORT_DIR`), and the files the cells
 * attached beside them (e.g. cell 6's SVG plots), by name.
 *
 * @param dir The report folder.
 * @returns The reports and the attachments' paths.
 * @example
 * ```ts
 * import { readCellReports } from "./report.ts";
 * const { reports, attachments } = await readCellReports(Deno.makeTempDirSync());
 * console.log(reports.length, attachments.length); // 0 0
 * ```
 */
export async function readCellReports(
  dir: string,
): Promise<{ reports: CellReport[]; attachments: string[] }> {
  const reports: CellReport[] = [];
  const attachments: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.name.endsWith(".json")) reports.push(JSON.parse(await Deno.readTextFile(path)));
    else attachments.push(path);
  }
  return { reports, attachments };
}
