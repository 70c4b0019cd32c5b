/**
 * A child's report to its parent on stdout, told apart from whatever the store under
 * test prints there. A store may log to stdout at any moment (as it opens, as it closes,
 * from an `unload` handler after the report), so a parent never takes "the last line":
 * it takes the last line that carries the report's mark.
 *
 * @example
 * ```ts
 * import { printReport, readReport } from "./report_line.ts";
 * printReport({ held: 3 });
 * console.log(readReport<{ held: number }>("[store] open\n\x1ecells-report {\"held\":3}\nbye\n"));
 * // { held: 3 }
 * ```
 *
 * @module
 */

/** The report's mark: an ASCII record separator and a name no store prints. */
export const REPORT_MARK = "\x1ecells-report ";

/**
 * Prints `value` as the child's report: one line, one write.
 *
 * @param value Anything `JSON.stringify` takes.
 */
export function printReport(value: unknown): void {
  console.log(REPORT_MARK + JSON.stringify(value));
}

/**
 * The last report in a child's stdout, or `undefined` when it printed none.
 *
 * @param stdout The child's whole stdout.
 * @returns The parsed report.
 * @throws {SyntaxError} When the report line is not whole JSON (a child killed mid-line).
 */
export function readReport<T>(stdout: string): T | undefined {
  const at = stdout.lastIndexOf(REPORT_MARK);
  if (at === -1) return undefined;
  const end = stdout.indexOf("\n", at);
  return JSON.parse(stdout.slice(at + REPORT_MARK.length, end === -1 ? undefined : end)) as T;
}
