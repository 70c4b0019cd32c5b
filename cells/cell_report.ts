/**
 * A cell's outcome, as written to the report directory.
 *
 * @example
 * ```ts
 * import type { CellReport } from "./cell_report.ts";
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
  /** PASS, FAIL or SKIP. */
  status: "PASS" | "FAIL" | "SKIP";
  /** Why it failed or was skipped. */
  reason?: string;
  /** Evidence figures. */
  figures: Record<string, unknown>;
  /** Where the evidence was kept. */
  evidence?: string;
}
