// One run of the fault program under the recorder: a fresh folder, the k-th call of a
// kind failed (or none, the clean run that counts the calls), a deadline after which the
// process is killed and the hang named, and what the log and the journal say.
import { stderrLine } from "../../internal/stderr_line.ts";
import { join } from "node:path";
import { readLog, type RecorderLog } from "../../recorder/log.ts";
import { denoCacheDir, recorderEnv } from "../../recorder/record.ts";
import { failOptions, type FaultCase } from "./fault_cases.ts";
import { endWithin, recordedEnv, spawnRecorded } from "../../harness/recorded_child.ts";
import { readAckJournal } from "../../harness/ack_journal.ts";
import type { FaultMark } from "./_program.ts";
import type { FaultClauseOptions } from "./types.ts";

/** What one run left. */
export interface FaultRun {
  /** The run's folder (the store is in `db/`). */
  dir: string;
  /** The recorder's log. */
  log: RecorderLog;
  /** The program's journal (a torn last line left out). */
  marks: FaultMark[];
  /** Whether it had to be killed at the deadline. */
  hung: boolean;
  /** How it ended. */
  status: Deno.CommandStatus;
  /** The end of its stderr. */
  stderr: string;
}

const PROGRAM = new URL("./children/fault_program.ts", import.meta.url);
/** A run that has not ended after this long hung on its fault. */
export const RUN_DEADLINE_MS = 20_000;

/**
 * Runs the program once in `dir`, failing call `k` of `fault` (no fault when `k` is 0).
 *
 * @param options The clause's target, leg, seed and recorder.
 * @param at The folder, the fault and k.
 * @returns What the run left.
 */
export async function faultRun(
  options: FaultClauseOptions & { recorder: { path: string } },
  at: { dir: string; fault?: FaultCase; k: number; appends?: number },
): Promise<FaultRun> {
  const { dir, fault, k } = at;
  const db = join(dir, "db");
  Deno.mkdirSync(db, { recursive: true });
  const marksPath = join(dir, "marks.jsonl");
  const logPath = join(dir, "fs.log");
  const env = recorderEnv({
    library: options.recorder.path,
    watched: db,
    log: logPath,
    data: true,
    mark: marksPath,
    ignore: [denoCacheDir(), Deno.env.get("TMPDIR") ?? "/tmp/deno-unused"],
    ...(fault && k > 0 ? failOptions(fault, k) : {}),
  });
  // A tree of its own, so that a hang kills what the store started too (a worker).
  const child = spawnRecorded(PROGRAM, [
    options.target,
    join(db, "store.db"),
    marksPath,
    String(options.seed),
    String(at.appends ?? 4),
  ], { env: recordedEnv(options.leg, env), stdout: "null" });
  const { output, late: hung } = await endWithin(child, RUN_DEADLINE_MS);
  return {
    dir,
    log: readLog(logPath),
    marks: readAckJournal<FaultMark>(marksPath),
    hung,
    status: { success: output.success, code: output.code, signal: output.signal },
    stderr: stderrLine(new TextDecoder().decode(output.stderr)),
  };
}
