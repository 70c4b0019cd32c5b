// One job of `deno task mutants`: runs the given cells against one target on the leg of
// this process (SESSION_DB_JOURNAL_MODE, DENO_SQLITE_PATH), in-process through
// runDefinitions (a failed step fails the cell at once), and prints one result line.
import { type CellId, CELLS } from "../../../cells/register.ts";
import { runDefinitions } from "../../../cells/engine/run_definitions.ts";
import { readCellReports } from "../../../cells/engine/report.ts";
import { sqliteVersion } from "../../../session_db/sqlite/mod.ts";
import { reapRunScope, type Survivor } from "../../../harness/process_tree.ts";

/** What a job writes to the result file its parent names (never to its console). */
export interface JobResult {
  /** The SQLite version of the leg. */
  sqliteVersion: string;
  /** One entry per cell run. */
  cells: JobCell[];
  /** What the job started and left running (killed at its end). */
  survivors: Survivor[];
}

/** One cell's outcome on the target. */
export interface JobCell {
  /** The cell. */
  cell: number;
  /** PASS, FAIL, SKIP, or ERROR (the suite failed: never a verdict, never a catch). */
  status: "PASS" | "FAIL" | "SKIP" | "ERROR";
  /** The failing step and its message, or the skip reason. */
  detail?: string;
  /** Seconds the cell took. */
  seconds: number;
  /** The kept run directory, when the cell failed and evidence was kept. */
  evidence?: string;
  /** The cell's evidence figures. */
  figures?: Record<string, unknown>;
}

if (import.meta.main) {
  const [resultPath, target, cellList, keep, cellOptions] = Deno.args;
  const extra = JSON.parse(cellOptions ?? "{}") as Record<string, unknown>;
  if (!resultPath || !target || !cellList) {
    console.error(
      "usage: _worker.ts <result file> <target> <cells, e.g. 1,2,3> [keep evidence 0|1] [cell options as JSON]",
    );
    Deno.exit(2);
  }
  // The cells write their reports here; they carry the evidence path and figures.
  const reports = await Deno.makeTempDir({ prefix: "mutants-reports-" });
  Deno.env.set("CELLS_REPORT_DIR", reports);
  const out: JobCell[] = [];
  try {
    for (const cell of cellList.split(",").map(Number) as CellId[]) {
      const started = performance.now();
      const [outcome] = await runDefinitions(
        await CELLS[cell]({ ...extra, target, keepEvidence: keep === "1" }),
      );
      const seconds = Number(((performance.now() - started) / 1000).toFixed(1));
      const report = (await readCellReports(reports)).reports.find((r) => r.cell === cell);
      out.push({
        cell,
        status: outcome?.status ?? "FAIL",
        ...(outcome?.detail ? { detail: outcome.detail } : {}),
        seconds,
        ...(report?.evidence && (outcome?.status === "FAIL" || outcome?.status === "ERROR")
          ? { evidence: report.evidence }
          : {}),
        ...(report?.figures ? { figures: report.figures } : {}),
      });
    }
  } finally {
    await Deno.remove(reports, { recursive: true }).catch(() => {});
  }
  const survivors = await reapRunScope();
  const result: JobResult = { sqliteVersion: sqliteVersion(), cells: out, survivors };
  await Deno.writeTextFile(resultPath, JSON.stringify(result));
  // Done: a timer a store opened here never cleared must not keep the job alive.
  Deno.exit(0);
}
