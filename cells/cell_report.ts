/**
 * How a cell that holds on the default leg only (its clause does not depend on the
 * journal mode) begins its SKIP reason on the other legs: a report reader (the
 * conformance levels) then asks for it on the default leg instead.
 *
 * @example
 * ```ts
 * import { DEFAULT_LEG_ONLY } from "./cell_report.ts";
 * const reason = `${DEFAULT_LEG_ONLY}: by design`;
 * console.log(reason.startsWith(DEFAULT_LEG_ONLY)); // true
 * ```
 */
export const DEFAULT_LEG_ONLY = "default leg only";

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
 * import { readCellReports } from "./cell_report.ts";
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
