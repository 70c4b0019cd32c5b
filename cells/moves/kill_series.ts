// Strength without crash points: for an operation inside which the target declares none,
// the cell kills the child at every file-system call of one occurrence of it, in order
// (the k-th call after the child's opening mark, through the LD_PRELOAD recorder). The
// walk is deterministic and ends when the operation completes before the k-th call.
import { countAcks } from "../../harness/ack_journal.ts";
import { classifyExit, reapAll } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { buildRecorder } from "../../recorder/build.ts";
import { recorderEnv, type RecorderOptions } from "../../recorder/record.ts";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";

/** Which calls a series kills before: syncs only (the default), or every call. */
export type SeriesKind = "sync" | "any";

/** The environment variable through which a child brackets its operations with marks. */
export const OP_MARKS_ENV = "CELLS_OP_MARKS";

/** One operation to walk. */
export interface SeriesCase {
  /** The operation, e.g. `forkSession`. */
  op: string;
  /** Which bracketed operation of the child's run (1-based): two marks each. */
  occurrence: number;
  /** The child script and its arguments for a fresh run on `db` in `dir`. */
  script: URL;
  args(db: string, dir: string): string[];
  /** Judges one crash state (steps named with `label`). */
  check(db: string, dir: string, label: string): Promise<void>;
  /**
   * Continues the judged crash state in a fresh process (the clause's own operation),
   * crashes it and judges again, both lives' acknowledged work included.
   */
  resume?(db: string, dir: string, label: string): Promise<void>;
}

let built: Promise<{ path?: string; reason?: string }> | undefined;
/** The recorder's library, built once per process; or why there is none. */
export function recorder(): Promise<{ path?: string; reason?: string }> {
  built ??= buildRecorder().then(
    (b) => b.ok ? { path: b.path } : { reason: b.reason },
    (error) => ({ reason: error instanceof Error ? error.message : String(error) }),
  );
  return built;
}

/**
 * A series child's environment: the recorder watching `<dir>/db`, logging to
 * `<dir>/fsrec.log`, the child's operation marks in `<dir>/marks.jsonl`, and `moves`.
 */
export function seriesEnv(
  library: string,
  dir: string,
  moves: Omit<RecorderOptions, "library" | "watched" | "log" | "mark">,
): Record<string, string> {
  const marks = `${dir}/marks.jsonl`;
  return {
    ...recorderEnv({
      ...moves,
      library,
      watched: `${dir}/db`,
      log: `${dir}/fsrec.log`,
      mark: marks,
    }),
    [OP_MARKS_ENV]: marks,
  };
}

/** The series' kind: the option, else `CELLS_KILL_SERIES` (`sync`, `any`, `off`). */
export function seriesKind(option?: SeriesKind | "off"): SeriesKind | "off" {
  const value = option ?? Deno.env.get("CELLS_KILL_SERIES") ?? "sync";
  if (value === "sync" || value === "any" || value === "off") return value;
  throw new Error(`Invalid CELLS_KILL_SERIES "${value}": use sync, any or off`);
}

/**
 * Kills a fresh child at call 1, 2, 3, … of one occurrence of `c.op` and checks every
 * crash state, until the operation completes before the k-th call (or `maxStates`).
 * Notes per operation how many kills landed inside it.
 */
export async function killSeries(
  ctx: CellRun,
  t: Deno.TestContext,
  c: SeriesCase,
  kind: SeriesKind,
  maxStates = 200,
): Promise<void> {
  const lib = await recorder();
  const key = `killSeries.${c.op}`;
  if (!lib.path) {
    // Said out loud: the operation was only killed where random kills fell.
    ctx.note(key, `not run: ${lib.reason}`);
    console.error(`  kill series for ${c.op} not run: ${lib.reason}`);
    return;
  }
  let inside = 0;
  let resumed = 0;
  let completed = false;
  for (let k = 1; k <= maxStates && !completed; k++) {
    const dir = ctx.run.file(`series-${c.op}-${k}`);
    await Deno.mkdir(`${dir}/db`, { recursive: true });
    const db = `${dir}/db/store.db`;
    const marks = `${dir}/marks.jsonl`;
    const env = seriesEnv(lib.path, dir, {
      crashAt: k,
      crashKind: kind,
      armAfterMarks: 2 * c.occurrence - 1,
    });
    const child = ctx.spawn(c.script, c.args(db, dir), { env });
    const closed = () => countAcks(marks) >= 2 * c.occurrence;
    try {
      await waitFor(() => child.exited !== undefined || closed(), {
        what: `${c.op} #${c.occurrence} to finish or the child to die at call ${k}`,
        deadlineMs: 60_000,
        observed: () => `${countAcks(marks)} marks`,
      });
    } finally {
      await reapAll([child]);
    }
    // The operation closed its marks before its k-th call (this run made fewer calls
    // than k; the child may have gone on and exited by itself): every call of it was
    // walked. Decided by the marks, not by how the child ended.
    if (closed()) {
      completed = true;
      break;
    }
    const label = `${c.op} #${c.occurrence} killed before ${kind} call ${k}`;
    const exit = classifyExit(child.exited!);
    if (exit.kind !== "killed") {
      const died = `${label}: the child died by SIGKILL`;
      // A child that ended cleanly without closing the operation did not run the plan
      // (the suite's failure); one that crashed did so inside the store.
      const clean = child.exited!.code === 0 && !child.exited!.signal;
      await t.step(died, () => {
        const message = `the child did not die at the call: ${child.describe()}`;
        throw clean ? new HarnessError(message) : new Error(message);
      });
      return;
    }
    inside++;
    tally(ctx, "sigkills", 1);
    ctx.observeLeg(db, label);
    await c.check(db, dir, label);
    if (c.resume) {
      await c.resume(db, dir, label);
      resumed++;
    }
  }
  ctx.note(key, { kind, killsInside: inside, resumed, complete: completed });
  console.log(
    `  kill series: ${inside} kill(s) inside ${c.op} #${c.occurrence} (${kind} calls), ${resumed} resumed${
      completed ? "" : `, stopped at ${maxStates}`
    }`,
  );
}
