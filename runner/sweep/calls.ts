// The syscall sweep (`deno task sweep --syscalls`): crash points for any store, without
// its help. Each program of the sweep (the bounded sequences of its operations the store
// supports) runs once, uncrashed, under the LD_PRELOAD recorder, with its intents and
// acknowledgements written to the recorder's mark file so they sit in the log between
// the calls around them. A SIGKILL before recorded call k keeps the page cache, so the
// state it leaves is the log's first k-1 calls applied to the start state (`killStates`):
// every k of every operation is derived from the one log and checked in-process by the
// sweep's own oracle (`_oracle.ts`: the interrupted operation absent or complete,
// acknowledged results kept, clauses, invariants, integrity, recovery determinism).
// A sample of states is cross-checked by real children SIGKILLed before call k
// (`FSREC_CRASH_AT`), judged by the same oracle. A failing state is shrunk to the
// shortest program and the earliest call that still fail, printed with its replay.
import { join } from "node:path";
import { buildRecorder } from "../../recorder/build.ts";
import { killStates } from "../../recorder/crash_states.ts";
import { type FileSet, readFolder, writeImage } from "../../recorder/image.ts";
import { logProblems, readLog } from "../../recorder/log.ts";
import { denoCacheDir, recorderEnv } from "../../recorder/record.ts";
import { RecoveredStates } from "../../recorder/recovered.ts";
import {
  journalModeOf,
  type JournalObservation,
  type LegName,
  legVerdict,
  observeJournalMode,
} from "../../harness/legs.ts";
import { sqliteLibraryPath, sqliteVersion } from "../../session_db/sqlite/database.ts";
import { loadTarget, type StoreOptions } from "../../cells/target.ts";
import { type Ack, checkRecovered, type Reference } from "./_oracle.ts";
import { expandSequence, missingMethods, type ProgramOp, SEQUENCE_OPS } from "./_program.ts";
import { referenceRun } from "./_run_state.ts";
import type { SweepStore } from "./_program.ts";

const CHILD = new URL("./children/sweep.ts", import.meta.url);

/** Options of {@linkcode syscallSweep}. */
export interface SyscallSweepOptions {
  /** The target specifier. */
  target: string;
  /** The leg (default: `default`). */
  leg?: LegName;
  /** The seed of the message texts. */
  seed: number;
  /** The longest program (default 2). */
  maxLength?: number;
  /** Only these programs (operations joined by `+`), instead of every sequence. */
  programs?: readonly string[];
  /** Only this call (1-based, counted over the whole run), for a replay. */
  call?: number;
  /** Real SIGKILL children per program, as a cross-check of the derived states (default 1). */
  kills?: number;
  /** Shrink a failure (default true). */
  shrink?: boolean;
  /** Progress lines (default `console.log`). */
  log?: (line: string) => void;
}

/** One failing state of the syscall sweep. */
export interface SyscallFailure {
  /** The program, operations joined by `+`. */
  program: string;
  /** The crash: SIGKILL before this recorded call (1-based over the run). */
  call: number;
  /** The operation the call belongs to (its index), or the close after the last. */
  operation: number;
  /** What failed. */
  problems: string[];
  /** The command that replays it. */
  replay: string;
}

/** The report of {@linkcode syscallSweep}. */
export interface SyscallSweepReport {
  /** Programs recorded. */
  programs: number;
  /** Derived SIGKILL states checked. */
  states: number;
  /** States the oracle ran on (the others recovered identically to one of these). */
  judged: number;
  /** Real SIGKILL children run as a cross-check, and how many disagreed or failed. */
  children: { run: number; failed: number };
  /** Seconds spent checking derived states (recording excluded), and the rate. */
  seconds: number;
  /** States per second of checking. */
  statesPerSecond: number;
  /** Failing states (the shrunk one first when shrinking found one). */
  failures: SyscallFailure[];
  /** Whether every state passed. */
  ok: boolean;
}

interface Setting {
  options: SyscallSweepOptions;
  library: string;
  root: string;
  template: string;
  templateFiles: FileSet;
  openStore: (path: string) => Promise<SweepStore>;
  references: Map<string, Promise<Reference>>;
  /** The journal mode of every state, observed before recovery (judged by `legVerdict`). */
  observations: JournalObservation[];
}

async function child(
  s: Setting,
  args: string[],
  env: Record<string, string>,
): Promise<Deno.CommandOutput> {
  const leg = s.options.leg ?? "default";
  const base: Record<string, string> = { ...Deno.env.toObject(), NO_COLOR: "1", ...env };
  if (leg !== "default") base.SESSION_DB_JOURNAL_MODE = leg;
  else delete base.SESSION_DB_JOURNAL_MODE;
  return await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-lock",
      "-A",
      "--unstable-kv",
      CHILD.href,
      args[0]!,
      s.options.target,
      ...args.slice(1),
    ],
    env: base,
    stdout: "piped",
    stderr: "piped",
  }).output();
}

function tail(output: Deno.CommandOutput): string {
  return new TextDecoder().decode(output.stderr).trim().split("\n").slice(-4).join(" | ");
}

/** Runs `program` on a fresh copy of the template under the recorder (crash at `crashAt`). */
async function record(
  s: Setting,
  program: readonly ProgramOp[],
  dir: string,
  crashAt?: number,
): Promise<{ output: Deno.CommandOutput; log: string; marks: string; db: string }> {
  Deno.mkdirSync(join(dir, "db"), { recursive: true });
  writeImage(s.templateFiles, join(dir, "db"));
  const db = join(dir, "db", "store.db");
  const marks = join(dir, "marks.jsonl");
  const log = join(dir, "fs.log");
  for (const path of [marks, log]) {
    try {
      Deno.removeSync(path);
    } catch { /* absent */ }
  }
  const env = recorderEnv({
    library: s.library,
    watched: join(dir, "db"),
    log,
    data: crashAt === undefined,
    mark: marks,
    ignore: [dir, denoCacheDir(), Deno.env.get("TMPDIR") ?? "/tmp/deno-unused"],
    ...(crashAt !== undefined ? { crashAt } : {}),
  });
  const output = await child(s, [
    "run",
    db,
    marks,
    marks,
    String(s.options.seed),
    program.join("+"),
  ], env);
  return { output, log, marks, db };
}

/** The acknowledgements among mark lines (intents have no `result`). */
function acksOf(lines: readonly string[]): Ack[] {
  const acks: Ack[] = [];
  for (const line of lines) {
    let entry: Ack;
    try {
      entry = JSON.parse(line);
    } catch {
      break; // a torn last line was never acknowledged
    }
    if ("result" in entry) acks.push(entry);
  }
  return acks;
}

function reference(s: Setting, program: readonly ProgramOp[]): Promise<Reference> {
  const key = program.join("+");
  let ref = s.references.get(key);
  if (!ref) {
    ref = referenceRun(s.openStore, s.options.seed, program, s.template, s.root);
    s.references.set(key, ref);
  }
  return ref;
}

/** Checks one state's files; returns its problems (`[]` when it passed). */
async function judge(
  s: Setting,
  program: readonly ProgramOp[],
  dir: string,
  acks: readonly Ack[],
): Promise<string[]> {
  const problems: string[] = [];
  const interrupted = acks.length;
  // A crash after the last acknowledgement (in close) must leave the final state: the
  // oracle sees it as a repeat of the last operation that changes nothing.
  const tailEnd = interrupted >= program.length;
  const checked = tailEnd ? [...program, program.at(-1)!] : [...program];
  await checkRecovered({
    openStore: s.openStore,
    state: { id: "", kind: "sequence", point: "syscall:k", k: 0, program: checked },
    interrupted,
    acks,
    db: join(dir, "store.db"),
    reference: async () => {
      const ref = await reference(s, program);
      return tailEnd
        ? { snaps: [...ref.snaps, ref.snaps.at(-1)!], results: [...ref.results, undefined] }
        : ref;
    },
    fail: (clause, text) => problems.push(`${clause}: ${text}`),
  });
  return problems;
}

function replay(s: Setting, program: string, call: number): string {
  const leg = s.options.leg ?? "default";
  return `deno task sweep --syscalls --target ${s.options.target} --legs ${leg} --seed ${s.options.seed} --program ${program} --call ${call}`;
}

/** Records a program and checks every derived state; the failures, in call order. */
async function sweepProgram(
  s: Setting,
  program: readonly ProgramOp[],
  cache: RecoveredStates<string[]>,
  counts: { states: number; seconds: number; children: number; childFailures: number },
): Promise<SyscallFailure[]> {
  const name = program.join("+");
  const dir = Deno.makeTempDirSync({ dir: s.root, prefix: "program-" });
  const run = await record(s, program, dir);
  if (!run.output.success) {
    return [{
      program: name,
      call: 0,
      operation: -1,
      problems: [`the uncrashed run failed: ${tail(run.output)}`],
      replay: replay(s, name, 0),
    }];
  }
  const log = readLog(run.log);
  const unfit = logProblems(log);
  if (unfit.length) {
    return [{ program: name, call: 0, operation: -1, problems: unfit, replay: replay(s, name, 0) }];
  }
  const failures: SyscallFailure[] = [];
  const started = performance.now();
  let last = 0;
  for (const state of killStates(log, s.templateFiles)) {
    last = state.k;
    if (s.options.call !== undefined && state.k !== s.options.call) continue;
    const acks = acksOf(state.acks);
    const context = JSON.stringify(acks);
    counts.states++;
    s.observations.push(
      journalModeOf(
        state.files.get("store.db"),
        state.files.get("store.db-journal"),
        `${name}: before call ${state.k}`,
      ),
    );
    const problems = await cache.check(
      state,
      `${name}\0${context}`,
      (scratch) => judge(s, program, scratch, acks),
    );
    if (problems.length) {
      failures.push({
        program: name,
        call: state.k,
        operation: acks.length,
        problems,
        replay: replay(s, name, state.k),
      });
    }
  }
  counts.seconds += (performance.now() - started) / 1000;
  // The cross-check: real children killed before sampled calls, judged the same way.
  const kills = s.options.call !== undefined ? 1 : s.options.kills ?? 1;
  for (let j = 0; j < kills && last > 1; j++) {
    const k = s.options.call ?? 1 + Math.floor(((j + 0.5) * (last - 1)) / kills);
    const killDir = join(dir, `kill-${k}`);
    const killed = await record(s, program, killDir, k);
    counts.children++;
    const recorded = readLog(killed.log).records.filter((r) => r.counted).length;
    const acks = acksOf(readMarks(killed.marks));
    let problems: string[];
    if (killed.output.signal !== "SIGKILL") {
      problems = [
        `child: expected SIGKILL before call ${k}, it ended with ${
          killed.output.signal ?? `exit ${killed.output.code}`
        }: ${tail(killed.output)}`,
      ];
    } else if (recorded !== k - 1) {
      problems = [`child: killed before call ${k} but ${recorded} calls were recorded`];
    } else {
      const db = join(killDir, "db", "store.db");
      s.observations.push(observeJournalMode(db, `${name}: a child killed before call ${k}`));
      problems = await judge(s, program, join(killDir, "db"), acks);
    }
    if (problems.length) {
      counts.childFailures++;
      failures.push({
        program: name,
        call: k,
        operation: acks.length,
        problems: problems.map((p) => `real SIGKILL child: ${p}`),
        replay: replay(s, name, k),
      });
    }
  }
  if (!failures.length) Deno.removeSync(dir, { recursive: true });
  return failures;
}

function readMarks(path: string): string[] {
  try {
    return Deno.readTextFileSync(path).split("\n").slice(0, -1);
  } catch {
    return [];
  }
}

/** The programs: every sequence up to `maxLength` of operations the store supports. */
function programs(methods: readonly string[], maxLength: number): ProgramOp[][] {
  const out: ProgramOp[][] = [];
  let level: (typeof SEQUENCE_OPS[number])[][] = [[]];
  for (let n = 1; n <= maxLength; n++) {
    level = level.flatMap((prefix) => SEQUENCE_OPS.map((op) => [...prefix, op]));
    for (const sequence of level) {
      const program = expandSequence(sequence);
      if (!missingMethods(program, methods).length) out.push(program);
    }
  }
  return out;
}

/** Shrinks a failure: the shortest program (ops dropped before the interrupted one) still failing, then its earliest failing call. */
async function shrink(
  s: Setting,
  failure: SyscallFailure,
  cache: RecoveredStates<string[]>,
): Promise<SyscallFailure> {
  const counts = { states: 0, seconds: 0, children: 0, childFailures: 0 };
  const { call: _call, ...rest } = s.options;
  const quiet: Setting = { ...s, options: { ...rest, kills: 0 } };
  let program = failure.program.split("+").slice(0, failure.operation + 1) as ProgramOp[];
  let best = failure;
  const failing = async (candidate: ProgramOp[]) =>
    (await sweepProgram(quiet, candidate, cache, counts))[0];
  const first = await failing(program);
  if (first) best = first;
  else program = failure.program.split("+") as ProgramOp[];
  for (let i = 0; i < program.length - 1;) {
    const candidate = [...program.slice(0, i), ...program.slice(i + 1)];
    const found = await failing(candidate);
    if (found) {
      program = candidate;
      best = found;
    } else i++;
  }
  return best;
}

/**
 * The syscall sweep: every recorded call of every program, derived from one recorded
 * run each and checked in-process, with real SIGKILL children as a sampled cross-check.
 *
 * @param options Target, leg, seed, programs, cross-check children.
 * @returns The report, or why the recorder cannot run here (a SKIP, never a pass).
 */
export async function syscallSweep(
  options: SyscallSweepOptions,
): Promise<SyscallSweepReport | { skip: string }> {
  const log = options.log ?? console.log;
  const built = await buildRecorder();
  if (!built.ok) return { skip: built.reason };
  const root = Deno.makeTempDirSync({ prefix: "sweep-syscalls-" });
  const module = await loadTarget(options.target);
  const leg = options.leg ?? "default";
  const storeOptions: StoreOptions = leg === "default" ? {} : { journalMode: leg };
  const s: Setting = {
    options,
    library: built.path,
    root,
    template: join(root, "template", "store.db"),
    templateFiles: new Map(),
    openStore: async (path) => await module.openStore(path, storeOptions) as SweepStore,
    references: new Map(),
    observations: [],
  };
  Deno.mkdirSync(join(root, "template"));
  const setup = await child(s, ["setup", s.template, String(options.seed)], {});
  if (!setup.success) throw new Error(`Cannot seed the sweep's store: ${tail(setup)}`);
  const { methods } = JSON.parse(
    new TextDecoder().decode(setup.stdout).trim().split("\n").at(-1)!,
  ) as { methods: string[] };
  s.templateFiles = readFolder(join(root, "template"));
  s.observations.push(observeJournalMode(s.template, "the seeded store, at rest", true));
  const chosen = options.programs?.map((p) => p.split("+") as ProgramOp[]) ??
    programs(methods, options.maxLength ?? 2);
  log(
    `sweep --syscalls: ${chosen.length} programs on leg ${leg}, seed ${options.seed}; target ${options.target}`,
  );
  const cache = new RecoveredStates<string[]>(join(root, "scratch"));
  const counts = { states: 0, seconds: 0, children: 0, childFailures: 0 };
  const failures: SyscallFailure[] = [];
  for (const program of chosen) {
    const found = await sweepProgram(s, program, cache, counts);
    for (const f of found.slice(0, 3)) {
      log(
        `  FAIL ${f.program} call ${f.call} (operation ${f.operation}): ${f.problems.join(" | ")}`,
      );
    }
    failures.push(...found);
  }
  if (failures.length && (options.shrink ?? true) && options.call === undefined) {
    const shrunk = await shrink(s, failures[0]!, cache);
    failures.unshift(shrunk);
    log(
      `  shrunk: ${shrunk.program} call ${shrunk.call}: ${
        shrunk.problems[0]
      }\n  replay: ${shrunk.replay}`,
    );
  }
  if (!failures.length) Deno.removeSync(root, { recursive: true });
  else log(`  kept: ${root}`);
  // A state in another mode than the leg's voids the run's evidence: SKIP, never PASS.
  const audit = legVerdict(
    { name: leg, library: sqliteLibraryPath(), sqliteVersion: sqliteVersion() },
    s.observations,
  );
  if (!audit.honoured) return { skip: audit.reason! };
  return {
    programs: chosen.length,
    states: counts.states,
    judged: cache.judged,
    children: { run: counts.children, failed: counts.childFailures },
    seconds: counts.seconds,
    statesPerSecond: counts.seconds > 0 ? counts.states / counts.seconds : 0,
    failures,
    ok: failures.length === 0,
  };
}
