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
import { type LogRecord, readLog } from "../../recorder/log.ts";
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
  /** Which calls the series kills before. */
  kind: SeriesKind;
  /** The most crash states walked (default 200). */
  maxStates?: number;
  /**
   * Walk the busiest of the first `busiestOf` occurrences instead: the one with the most
   * calls of the series' kind in an uncrashed run, `occurrence` when it is among them. A
   * store's periodic work (a compaction, a checkpoint every few writes) lives there.
   */
  busiestOf?: number;
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
 * The recorder's library for a series that kills or stops a child inside an operation.
 * Without it the clause would be judged only where random kills fell, weaker than a cell
 * promises for a store that declares no crash points, so its absence ends the cell in
 * ERROR with the reason, never in a PASS.
 *
 * @param what The series, for the message (e.g. `kill series for appendMessage`).
 * @returns The library's path.
 * @throws {HarnessError} Where this machine cannot build the recorder.
 * @example
 * ```ts ignore
 * import { seriesRecorder } from "./kill_series.ts";
 * const library = await seriesRecorder("kill series for appendMessage");
 * ```
 */
export async function seriesRecorder(what: string): Promise<string> {
  const lib = await recorder();
  if (lib.path) return lib.path;
  throw new HarnessError(
    `Cannot run the ${what}: ${lib.reason} (the file-system call recorder needs Linux with ` +
      `glibc and a C compiler; "deno task recorder" builds it)`,
  );
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

/** How one kill of a series ended. */
type SeriesKill =
  /** The operation closed its marks before the call: every call of it was walked. */
  | "completed"
  /** The child died otherwise than by the kill (a step failed). */
  | "stray"
  /** The kill landed inside the operation and the state was judged (and resumed). */
  | "inside";

/**
 * Runs a fresh child armed to die before call `k` of one occurrence of `c.op`, and judges
 * (and resumes) the crash state when the kill landed inside the operation.
 */
/** The walks each run has made, so that two walks of one operation get folders of their own. */
const walksOf = new WeakMap<CellRun, Set<string>>();

/** A name for this walk's folders, unique in the run: `series-<op>-<occurrence>[-n]`. */
function walkName(ctx: CellRun, c: SeriesCase): string {
  const walks = walksOf.get(ctx) ?? new Set<string>();
  walksOf.set(ctx, walks);
  const base = `series-${c.op}-${c.occurrence}`;
  let name = base;
  for (let n = 2; walks.has(name); n++) name = `${base}-${n}`;
  walks.add(name);
  return name;
}

async function killAtCall(
  ctx: CellRun,
  t: Deno.TestContext,
  walk: { c: SeriesCase; library: string; k: number; name: string },
): Promise<SeriesKill> {
  const { c, library, k } = walk;
  const dir = ctx.run.file(`${walk.name}-${k}`);
  await Deno.mkdir(`${dir}/db`, { recursive: true });
  const db = `${dir}/db/store.db`;
  const marks = `${dir}/marks.jsonl`;
  const env = seriesEnv(library, dir, {
    crashAt: k,
    crashKind: c.kind,
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
  if (closed()) return "completed";
  const label = `${c.op} #${c.occurrence} killed before ${c.kind} call ${k}`;
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
    return "stray";
  }
  tally(ctx, "sigkills", 1);
  ctx.observeLeg(db, label);
  await c.check(db, dir, label);
  if (c.resume) await c.resume(db, dir, label);
  return "inside";
}

/**
 * Kills a fresh child at call 1, 2, 3, … of one occurrence of `c.op` and checks every
 * crash state, until the operation completes before the k-th call (or `c.maxStates`).
 * Notes per operation how many kills landed inside it.
 *
 * @example
 * ```ts ignore
 * await killSeries(ctx, t, {
 *   op: "appendMessage",
 *   occurrence: 3,
 *   script: WRITER,
 *   args: (db, dir) => [db, `${dir}/acks.jsonl`],
 *   check: (db, dir, label) => judge(db, `${dir}/acks.jsonl`, label),
 *   kind: "sync",
 * });
 * ```
 */
export async function killSeries(
  ctx: CellRun,
  t: Deno.TestContext,
  walked: SeriesCase,
): Promise<void> {
  const { kind, maxStates = 200 } = walked;
  const library = await seriesRecorder(`kill series for ${walked.op}`);
  const c = walked.busiestOf
    ? { ...walked, occurrence: await busiestOccurrence(ctx, walked, library) }
    : walked;
  const key = `killSeries.${c.op}`;
  let inside = 0;
  let completed = false;
  const name = walkName(ctx, c);
  for (let k = 1; k <= maxStates && !completed; k++) {
    const ended = await killAtCall(ctx, t, { c, library, k, name });
    if (ended === "stray") return;
    if (ended === "completed") completed = true;
    else inside++;
  }
  const resumed = c.resume ? inside : 0;
  ctx.note(key, { kind, killsInside: inside, resumed, complete: completed });
  console.log(
    `  kill series: ${inside} kill(s) inside ${c.op} #${c.occurrence} (${kind} calls), ${resumed} resumed${
      completed ? "" : `, stopped at ${maxStates}`
    }`,
  );
}

/** Whether a counted call is one a series of `kind` kills before. */
function killable(record: LogRecord, kind: SeriesKind): boolean {
  return record.counted && (kind === "any" || record.kind === "sync" || record.kind === "syncAll");
}

/**
 * The occurrence of `c.op`, among the first `c.busiestOf`, that makes the most calls a
 * series of its kind kills before, read from one uncrashed run under the recorder;
 * `c.occurrence` when it is among the busiest, else the first of them.
 */
async function busiestOccurrence(ctx: CellRun, c: SeriesCase, library: string): Promise<number> {
  const count = c.busiestOf!;
  const dir = ctx.run.file(`series-${c.op}-census`);
  await Deno.mkdir(`${dir}/db`, { recursive: true });
  const marks = `${dir}/marks.jsonl`;
  const child = ctx.spawn(c.script, c.args(`${dir}/db/store.db`, dir), {
    env: seriesEnv(library, dir, {}),
  });
  try {
    await waitFor(() => child.exited !== undefined || countAcks(marks) >= 2 * count, {
      what: `${count} runs of ${c.op} to count their calls`,
      deadlineMs: 60_000,
      observed: () => `${countAcks(marks)} marks`,
      children: [child],
    });
  } catch (error) {
    // A child that ended early (a store that stops by itself) leaves fewer to choose from.
    if (child.exited === undefined) throw error;
  } finally {
    await reapAll([child]);
  }
  const calls = new Array<number>(count + 1).fill(0);
  let marksSeen = 0;
  for (const record of readLog(`${dir}/fsrec.log`).records) {
    if (record.kind === "mark") marksSeen++;
    else if (marksSeen % 2 === 1 && killable(record, c.kind)) {
      const occurrence = (marksSeen + 1) / 2;
      if (occurrence <= count) calls[occurrence]!++;
    }
  }
  const most = Math.max(...calls);
  if (most === 0 || calls[c.occurrence] === most) return c.occurrence;
  return calls.indexOf(most);
}
