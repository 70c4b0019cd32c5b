/**
 * `deno task sweep`: the deterministic crash sweep. Random kill timing finds what it
 * happens to hit; the sweep moves the crash forward one named point at a time (as
 * SQLite's own crash tests do) and checks every state it leaves.
 *
 * - **Point sweep**: for every crash point of the target (`crashPoints()`) × occurrence
 *   k in {1, 2, 3} × honoured leg, a child runs the program that owns the point (its
 *   operation at least three times, `tools/_sweep_program.ts`) on a copy of a small
 *   seeded store, with `SESSION_DB_CRASH_AT=<point>@<k>`, journaling an intent before
 *   each operation and an acknowledgement after it. The child must die by SIGKILL in an
 *   operation that owns the point.
 * - **Bounded sequences**: every sequence of up to 3 operations from {append, batch
 *   append, rotate, rewind, fork, claim, outbox step}, crashed at every crash point (and
 *   every occurrence) of its last operation. A seeded sample by default; `--full` for the
 *   whole space (the sizes are printed).
 * - **Oracle**, on every recovered state: the child died where it was armed; the
 *   acknowledged operations are present with the results they acknowledged; the
 *   interrupted operation is all-or-nothing (the recovered state equals the uncrashed
 *   run's state without it or with it, never anything else); a point after COMMIT keeps
 *   the operation; the owning clause (no compression orphan, appends to a rotated parent
 *   refused); the store's invariants hold, `integrity_check` is `ok`, two recovery passes
 *   read the same, and the file is still in the leg's journal mode.
 * - **Reproducible**: the seed (message texts, the sample) is printed; `--seed N`
 *   replays it; `--state <id>` replays one state. A failing state keeps its directory
 *   (the crashed files before recovery, journals, stderr, `evidence.json`) with the
 *   exact command that replays it.
 *
 * Flags: `--target <module>`, `--legs default,delete,wal`, `--libraries system,fixed`
 * (default: the library this process loads), `--points <names or method prefixes>`,
 * `--k 1,2,3`, `--full`, `--sample N` (default 100 sequence states per leg),
 * `--no-sequences`, `--max-length N` (default 3), `--seed N`, `--state <id,...>`,
 * `--jobs N` (default 2), `--json <path>` (default `.cache/sweep/report.json`),
 * `--no-summary` (no final table; used for the per-library runs of `--libraries`),
 * `--power-loss`.
 *
 * Power loss (`--power-loss`): a SIGKILL leaves the page cache intact, so the plain sweep
 * can never show a commit lost to power loss. The power-loss variant runs each crash
 * child with the recording VFS (`session_db/recording_vfs.ts`), keeps the start state as
 * a baseline, and evaluates the same oracle on the last-sync image
 * (`session_db/crash_states.ts`) instead of the files the dead child left: every
 * acknowledged operation present with its result (durability), the interrupted one
 * absent or complete (and present when the point is after COMMIT), invariants and
 * integrity. Its children get an unscoped `--allow-ffi`, as the power-loss cells' do.
 * {@linkcode CrashImage} is the hook (see `SweepOptions.crashImage`).
 *
 * @module
 */
import { fail, flagsOf, legListArg } from "./_cli.ts";
import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";
import { deepStrictEqual } from "node:assert/strict";
import { readAckJournal } from "../harness/ack_journal.ts";
import {
  type Child,
  classifyExit,
  reapAll,
  spawnChild,
  type SpawnOptions,
} from "../harness/child.ts";
import { integrityCheck } from "../harness/db_audit.ts";
import { RunDir } from "../harness/evidence.ts";
import { seededRandom } from "../harness/seeded_random.ts";
import { type Leg, legEnv, type LegName, LEGS, parseLeg } from "../harness/legs.ts";
import { onDiskJournalMode } from "../session_db/journal_mode.ts";
import { sqliteLibraryPath, sqliteVersion } from "../session_db/sqlite/database.ts";
import { systemLibraryPath } from "../session_db/sqlite/library.ts";
import { loadTarget, type StoreOptions, targetSpecifier } from "../cells/target.ts";
import { targetAccess } from "../cells/target_access.ts";
import {
  expandSequence,
  hitsPerCall,
  methodOf,
  missingMethods,
  needsDeadOwner,
  owns,
  POINT_PROGRAMS,
  type ProgramOp,
  ProgramRunner,
  SEQUENCE_OPS,
  type SequenceOp,
  snapshot,
  type StoreState,
  type SweepStore,
} from "./_sweep_program.ts";
import { fixedSqlitePath } from "./build_sqlite.ts";
import { lastSyncImage } from "./_sweep_power_loss.ts";

export type { LegName } from "../harness/legs.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CHILD = new URL("./_sweep_child.ts", import.meta.url);
const REFERENCE_TARGET = new URL("../cells/reference_target.ts", import.meta.url).href;
/** A child that has not died after this long is killed and its state failed. */
const CHILD_DEADLINE_MS = 30_000;

/**
 * The power-loss hook: how a crash state is turned into the files the oracle checks.
 * Unset, the sweep checks what the SIGKILLed child left (the page cache survives). The
 * power-loss variant (`tools/_sweep_power_loss.ts`, `--power-loss`) plugs in here: it
 * spawns the child with the recording VFS (`spawn`), keeps a baseline (`beforeChild`)
 * and builds the last-sync image (`image`).
 */
export interface CrashImage {
  /** A name for the report, e.g. `last-sync image`. */
  name: string;
  /** The command-line flag that selects it, for replay commands (e.g. `--power-loss`). */
  flag?: string;
  /** Extra environment for the crash child (its names join the child's `--allow-env`). */
  childEnv?(stateDir: string): Record<string, string>;
  /** Spawns the crash child instead of `spawnChild` (same options; e.g. with a preload). */
  spawn?(options: SpawnOptions): Child;
  /** Runs after the start state is in place and before the child starts. */
  beforeChild?(stateDir: string, dbPath: string): void | Promise<void>;
  /**
   * Builds the database to check from what the dead child left: its path, or the path
   * with whether the image differs from the files the child left. Throws when the state
   * cannot be imaged (the state fails with the clause `crash image`).
   */
  image(
    stateDir: string,
    dbPath: string,
  ): string | CrashImageResult | Promise<string | CrashImageResult>;
}

/** What {@linkcode CrashImage.image} built. */
export interface CrashImageResult {
  /** The database to check. */
  db: string;
  /** Whether it differs from the files the child left (something was not durable). */
  differs: boolean;
}

/** Options of {@linkcode sweep}. */
export interface SweepOptions {
  /** The target module (default: the reference store). */
  target?: string | URL;
  /** The legs (default: default, delete, wal), on the SQLite library this process loaded. */
  legs?: readonly LegName[];
  /** Only these crash points: exact names, or method prefixes ending with `:`. */
  points?: readonly string[];
  /** The occurrences of the point sweep (default 1, 2, 3). */
  occurrences?: readonly number[];
  /** Bounded sequences: `none`, a seeded `sample` (default) or the `full` space. */
  sequences?: "none" | "sample" | "full";
  /** Sequence states per leg in a sample (default 100). */
  sample?: number;
  /** The longest sequence (default 3). */
  maxLength?: number;
  /** The seed of the message texts and the sample (default: random, reported). */
  seed?: number;
  /** Run exactly these states (ids as reported), instead of planning. */
  states?: readonly string[];
  /** Children in flight at once (default 2). */
  jobs?: number;
  /** Keep failing states as evidence (default true). */
  keepEvidence?: boolean;
  /** How crash states become the files checked (default: as the dead child left them). */
  crashImage?: CrashImage;
  /** Progress lines (default `console.log`). */
  log?: (line: string) => void;
}

/** One checked crash state that failed. */
export interface SweepFailure {
  /** The state id: `<point>@<k>`, or `<op>+<op>/<point>@<k>` for a sequence. */
  state: string;
  /** The leg. */
  leg: LegName;
  /** The crash point. */
  point: string;
  /** The occurrence armed. */
  k: number;
  /** What failed: the clause, `invariants`, `not reached`, `child crashed`, … */
  clause: string;
  /** Every problem found, one line each. */
  problems: string[];
  /** Where the evidence was kept. */
  evidence?: string;
  /** The command that replays this state. */
  replay: string;
}

/** The sweep of one leg. */
export interface LegSweep {
  /** The leg. */
  leg: LegName;
  /** `RUN`, or `SKIP` when the leg was not honoured or the store could not be seeded. */
  status: "RUN" | "SKIP";
  /** Why it was skipped. */
  reason?: string;
  /** The on-disk journal mode of the seeded store. */
  onDisk?: string;
  /** Crash points selected. */
  pointsTotal: number;
  /** Points reached (SIGKILL at the point) at every occurrence. */
  pointsCovered: number;
  /** Points not covered, with why. */
  uncovered: { point: string; reason: string }[];
  /** Points of methods the store does not have (nothing can reach them), not counted. */
  notApplicable: { point: string; reason: string }[];
  /** Point-sweep states checked. */
  pointStates: number;
  /** Sequence states checked. */
  sequenceStates: number;
  /** Sequence states in the full space (for the selected points), and sequences. */
  sequenceSpace: { sequences: number; states: number };
  /** States checked. */
  states: number;
  /**
   * How the recovered states matched: the interrupted operation absent, complete, or
   * one that changes nothing (both candidates are the same state).
   */
  matched: { without: number; with: number; unchanged: number };
  /**
   * With a crash image: states whose image differed from the files the child left (the
   * power loss dropped something), out of the states imaged.
   */
  imaged?: { states: number; differing: number };
  /** Failing states. */
  failures: SweepFailure[];
  /** Wall time of the leg. */
  seconds: number;
  /** Mean child run and check times per state, for profiling. */
  meanChildMs: number;
  /** Mean check time per state. */
  meanCheckMs: number;
}

/** The report of {@linkcode sweep}. */
export interface SweepReport {
  /** The target. */
  target: string;
  /** The seed. */
  seed: number;
  /** The SQLite library. */
  library: string;
  /** Its version. */
  sqliteVersion: string;
  /** How crash states were imaged. */
  image: string;
  /** Per leg. */
  legs: LegSweep[];
  /** States checked in all. */
  states: number;
  /** Wall time. */
  seconds: number;
  /** States checked per second of wall time. */
  statesPerSecond: number;
  /** Crash points with a failing state, with their state count. */
  failingPoints: { point: string; states: number }[];
  /**
   * Whether some leg ran, and every leg that ran covered every selected point with no
   * failing state (a sweep where every leg was skipped is not a pass).
   */
  ok: boolean;
}

/** A crash state to run: a program and where to kill it. */
interface PlannedState {
  id: string;
  kind: "point" | "sequence";
  point: string;
  k: number;
  program: ProgramOp[];
  /** Sequences: the operation the crash must interrupt (the last). */
  expectedOp?: number;
}

interface Reference {
  snaps: StoreState[];
  results: unknown[];
}

/** The clause each operation's state is owned by. */
const CLAUSES: Record<ProgramOp, string> = {
  append: "prefix durability",
  batch: "prefix durability",
  claim: "consume-once",
  rotate: "rotation atomicity",
  rewind: "fork determinism",
  fork: "fork determinism",
  record: "outbox exactly-once",
  attempt: "outbox exactly-once",
  deliver: "outbox exactly-once",
  fail: "outbox exactly-once",
  unknown: "outbox exactly-once",
  sweep: "outbox exactly-once",
};

function selected(point: string, filter: readonly string[] | undefined): boolean {
  if (!filter?.length) return true;
  return filter.some((f) => f.endsWith(":") ? point.startsWith(f) : point === f);
}

/** How many times the program reaches `point` up to (excluding) operation `upTo`. */
function hitsBefore(program: readonly ProgramOp[], point: string, upTo: number): number {
  let hits = 0;
  const calls = new Map<ProgramOp, number>();
  for (let i = 0; i < upTo; i++) {
    const op = program[i]!;
    const call = calls.get(op) ?? 0;
    calls.set(op, call + 1);
    hits += hitsPerCall(op, point, call);
  }
  return hits;
}

function callIndex(program: readonly ProgramOp[], at: number): number {
  return program.slice(0, at).filter((op) => op === program[at]).length;
}

/**
 * Plans the point sweep: every selected point × occurrence, with the program that owns
 * the point; points no program can reach are returned as uncovered with the reason, and
 * points of methods the store does not have as not applicable.
 *
 * @param points The target's crash points.
 * @param methods The store's methods.
 * @param options Point filter and occurrences.
 * @returns The states, the uncovered points and the points not applicable.
 * @example
 * ```ts
 * import { planPoints } from "./sweep.ts";
 * const { states } = planPoints(["appendMessage:afterInsert"], ["appendMessage"], {});
 * console.log(states.map((s) => s.id)); // the point at @1, @2, @3
 * ```
 */
export function planPoints(
  points: readonly string[],
  methods: readonly string[],
  options: Pick<SweepOptions, "points" | "occurrences">,
): {
  states: { id: string; point: string; k: number; program: string }[];
  uncovered: { point: string; reason: string }[];
  notApplicable: { point: string; reason: string }[];
} {
  const planned = planPointStates(points, methods, options);
  return {
    states: planned.states.map((s) => ({
      id: s.id,
      point: s.point,
      k: s.k,
      program: s.program.join("+"),
    })),
    uncovered: planned.uncovered,
    notApplicable: planned.notApplicable,
  };
}

function planPointStates(
  points: readonly string[],
  methods: readonly string[],
  options: Pick<SweepOptions, "points" | "occurrences">,
): {
  states: PlannedState[];
  uncovered: { point: string; reason: string }[];
  notApplicable: { point: string; reason: string }[];
} {
  const states: PlannedState[] = [];
  const uncovered: { point: string; reason: string }[] = [];
  const notApplicable: { point: string; reason: string }[] = [];
  for (const point of points.filter((p) => selected(p, options.points))) {
    if (!methods.includes(methodOf(point))) {
      notApplicable.push({
        point,
        reason: `the store has no ${methodOf(point)}, so nothing can reach the point`,
      });
      continue;
    }
    const program = POINT_PROGRAMS[methodOf(point)];
    if (!program) {
      uncovered.push({
        point,
        reason: `no sweep operation calls ${methodOf(point)} (add a program for it to ` +
          `POINT_PROGRAMS in tools/_sweep_program.ts)`,
      });
      continue;
    }
    const missing = missingMethods(program, methods);
    if (missing.length) {
      uncovered.push({ point, reason: `the store lacks ${missing.join(", ")}` });
      continue;
    }
    for (const k of options.occurrences ?? [1, 2, 3]) {
      states.push({ id: `${point}@${k}`, kind: "point", point, k, program: [...program] });
    }
  }
  return { states, uncovered, notApplicable };
}

/** Every sequence of 1..maxLength operations, shortest first, in operation order. */
function allSequences(maxLength: number): SequenceOp[][] {
  const out: SequenceOp[][] = [];
  let level: SequenceOp[][] = [[]];
  for (let n = 1; n <= maxLength; n++) {
    level = level.flatMap((prefix) => SEQUENCE_OPS.map((op) => [...prefix, op]));
    out.push(...level);
  }
  return out;
}

function planSequenceStates(
  points: readonly string[],
  methods: readonly string[],
  options: Pick<SweepOptions, "points" | "maxLength">,
): { states: PlannedState[]; sequences: number } {
  const chosen = points.filter((p) => selected(p, options.points));
  const states: PlannedState[] = [];
  let sequences = 0;
  for (const sequence of allSequences(options.maxLength ?? 3)) {
    const program = expandSequence(sequence);
    if (missingMethods(program, methods).length) continue;
    sequences++;
    const last = program.length - 1;
    const op = program[last]!;
    for (const point of chosen.filter((p) => owns(op, p))) {
      const before = hitsBefore(program, point, last);
      for (let j = 1; j <= hitsPerCall(op, point, callIndex(program, last)); j++) {
        states.push({
          id: `${sequence.join("+")}/${point}@${before + j}`,
          kind: "sequence",
          point,
          k: before + j,
          program,
          expectedOp: last,
        });
      }
    }
  }
  return { states, sequences };
}

/**
 * Sizes the bounded-sequence space: every sequence of up to `maxLength` operations with
 * a crash at every point (and occurrence) of its last operation.
 *
 * @param points The target's crash points.
 * @param methods The store's methods.
 * @param options Point filter and the longest sequence.
 * @returns How many sequences and crash states the full space holds.
 * @example
 * ```ts
 * import { sequenceSpace } from "./sweep.ts";
 * console.log(sequenceSpace(["appendMessage:afterInsert"], ["appendMessage"], {}).sequences);
 * ```
 */
export function sequenceSpace(
  points: readonly string[],
  methods: readonly string[],
  options: Pick<SweepOptions, "points" | "maxLength">,
): { sequences: number; states: number } {
  const { states, sequences } = planSequenceStates(points, methods, options);
  return { sequences, states: states.length };
}

/** A seeded sample of `n` items, in their original order. */
function sample<T>(items: readonly T[], n: number, seed: number): T[] {
  if (n >= items.length) return [...items];
  const random = seededRandom(seed ^ 0x5eed);
  const index = items.map((_, i) => i);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(random() * (index.length - i));
    [index[i], index[j]] = [index[j]!, index[i]!];
  }
  return index.slice(0, n).sort((a, b) => a - b).map((i) => items[i]!);
}

function parseStateId(id: string): PlannedState {
  const match = /^(?:([a-z+]+)\/)?([A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+)@(\d+)$/.exec(id);
  if (!match) {
    throw new Error(
      `Invalid sweep state "${id}": use <point>@<k> or <op>+<op>/<point>@<k>, as reported`,
    );
  }
  const [, seq, point, k] = match;
  if (seq) {
    const sequence = seq.split("+").map((op) => {
      if (!(SEQUENCE_OPS as readonly string[]).includes(op)) {
        throw new Error(
          `Invalid sweep state "${id}": unknown operation "${op}" (use ${SEQUENCE_OPS.join(", ")})`,
        );
      }
      return op as SequenceOp;
    });
    const program = expandSequence(sequence);
    return {
      id,
      kind: "sequence",
      point: point!,
      k: Number(k),
      program,
      expectedOp: program.length - 1,
    };
  }
  const program = POINT_PROGRAMS[methodOf(point!)];
  if (!program) {
    throw new Error(`Invalid sweep state "${id}": no sweep operation calls ${methodOf(point!)}`);
  }
  return { id, kind: "point", point: point!, k: Number(k), program: [...program] };
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Copies a database with its journal or WAL (SQLite rebuilds the shm index). */
function copyDb(from: string, to: string, suffixes = ["", "-journal", "-wal"]): void {
  for (const suffix of suffixes) {
    if (exists(from + suffix)) Deno.copyFileSync(from + suffix, to + suffix);
  }
}

/** A short description of how two states differ (at most `limit` lines). */
function diff(a: StoreState, b: StoreState, limit = 4): string[] {
  const out: string[] = [];
  const sessionsA = new Map(a.sessions.map((s) => [s.id, s]));
  const sessionsB = new Map(b.sessions.map((s) => [s.id, s]));
  for (const id of new Set([...sessionsA.keys(), ...sessionsB.keys()])) {
    const x = sessionsA.get(id);
    const y = sessionsB.get(id);
    if (!x) out.push(`session ${id} missing`);
    else if (!y) out.push(`session ${id} present (${JSON.stringify(x)})`);
    else if (JSON.stringify(x) !== JSON.stringify(y)) {
      out.push(`session ${id}: ${JSON.stringify(x)} instead of ${JSON.stringify(y)}`);
    }
  }
  for (const id of new Set([...Object.keys(a.messages), ...Object.keys(b.messages)])) {
    const x = a.messages[id] ?? [];
    const y = b.messages[id] ?? [];
    if (JSON.stringify(x) === JSON.stringify(y)) continue;
    const i = x.findIndex((row, n) => JSON.stringify(row) !== JSON.stringify(y[n]));
    const at = i === -1 ? Math.min(x.length, y.length) : i;
    out.push(
      `messages of ${id}: ${x.length} rows instead of ${y.length}, first difference at row ${at}: ${
        JSON.stringify(x[at] ?? null)
      } instead of ${JSON.stringify(y[at] ?? null)}`,
    );
  }
  const obA = new Map(a.obligations.map((o) => [o.content, o]));
  const obB = new Map(b.obligations.map((o) => [o.content, o]));
  for (const id of new Set([...obA.keys(), ...obB.keys()])) {
    const x = obA.get(id);
    const y = obB.get(id);
    if (JSON.stringify(x) !== JSON.stringify(y)) {
      out.push(
        `obligation "${id}": ${JSON.stringify(x ?? null)} instead of ${JSON.stringify(y ?? null)}`,
      );
    }
  }
  return out.length > limit ? [...out.slice(0, limit), `… ${out.length - limit} more`] : out;
}

function same(a: unknown, b: unknown): boolean {
  try {
    deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

interface LegContext {
  leg: Leg;
  target: string;
  seed: number;
  root: RunDir;
  template: string;
  openStore: (path: string) => Promise<SweepStore>;
  references: Map<string, Promise<Reference>>;
  crashImage?: CrashImage;
  keepEvidence: boolean;
}

interface StateOutcome {
  state: PlannedState;
  covered: boolean;
  match?: "without" | "with" | "unchanged";
  failure?: SweepFailure;
  /** With a crash image: whether the image differed from the files the child left. */
  imageDiffers?: boolean;
  childMs: number;
  checkMs: number;
}

function spawnSweepChild(
  ctx: LegContext,
  dir: string,
  args: string[],
  env = {},
  spawn: (options: SpawnOptions) => Child = spawnChild,
): Child {
  const access = targetAccess(ctx.target);
  return spawn({
    script: CHILD,
    args: [args[0]!, ctx.target, ...args.slice(1)],
    runDir: dir,
    library: ctx.leg.library,
    env: { ...legEnv(ctx.leg), ...env },
    ...(access.read ? { read: access.read } : {}),
    ...(access.importHosts ? { importHosts: access.importHosts } : {}),
  });
}

/** Awaits a child's exit, killing it at the deadline; `true` when it ended on its own. */
async function settle(child: Child, deadlineMs = CHILD_DEADLINE_MS): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = await Promise.race([
    child.status.then(() => false),
    new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(true), deadlineMs)),
  ]);
  clearTimeout(timer);
  if (timedOut) await reapAll([child]);
  return !timedOut;
}

/** Runs a program uncrashed in this process from `start`: the state before and after each op. */
function reference(
  ctx: LegContext,
  program: readonly ProgramOp[],
  start: string,
): Promise<Reference> {
  const key = `${start}|${program.join("+")}`;
  let result = ctx.references.get(key);
  if (!result) {
    result = (async () => {
      const dir = Deno.makeTempDirSync({ dir: ctx.root.path, prefix: "reference-" });
      const db = join(dir, "store.db");
      copyDb(start, db);
      const store = await ctx.openStore(db);
      try {
        const runner = new ProgramRunner(store, ctx.seed);
        const snaps = [await snapshot(store)];
        const results: unknown[] = [];
        for (const [i, op] of program.entries()) {
          results.push(await runner.run(op, i));
          snaps.push(await snapshot(store));
        }
        return { snaps, results };
      } finally {
        await store.close();
        Deno.removeSync(dir, { recursive: true });
      }
    })();
    ctx.references.set(key, result);
  }
  return result;
}

async function recover(
  ctx: LegContext,
  db: string,
): Promise<{ state: StoreState; invariants: string[] }> {
  const store = await ctx.openStore(db);
  try {
    const state = await snapshot(store);
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { state, invariants };
  } finally {
    await store.close();
  }
}

function orphans(state: StoreState): string[] {
  const parents = new Set(state.sessions.map((s) => s.parent));
  return state.sessions.filter((s) => s.endReason === "compression" && !parents.has(s.id)).map((
    s,
  ) => s.id);
}

function replayCommand(ctx: LegContext, state: PlannedState): string {
  const parts = [`DENO_SQLITE_PATH=${shellQuote(ctx.leg.library)}`, "deno", "task", "sweep"];
  if (ctx.target !== REFERENCE_TARGET) parts.push("--target", shellQuote(ctx.target));
  if (ctx.crashImage?.flag) parts.push(ctx.crashImage.flag);
  parts.push("--legs", ctx.leg.name, "--seed", String(ctx.seed), "--state", shellQuote(state.id));
  return parts.join(" ");
}

async function runState(ctx: LegContext, state: PlannedState, n: number): Promise<StateOutcome> {
  const started = performance.now();
  const dir = Deno.makeTempDirSync({
    dir: ctx.root.path,
    prefix: `${String(n).padStart(4, "0")}-${state.id.replace(/[^\w.@+-]/g, "_")}-`,
  });
  const db = join(dir, "store.db");
  copyDb(ctx.template, db);
  const problems: { clause: string; text: string }[] = [];
  const fail = (clause: string, text: string) => problems.push({ clause, text });
  let start = ctx.template;
  let child: Child | undefined;
  let owner: Child | undefined;
  let endedOnItsOwn = true;
  if (needsDeadOwner(state.program)) {
    // Obligations of a process that has just exited (a pid recycled since the template
    // was built could look alive): the start state of this one run.
    owner = spawnSweepChild(ctx, dir, ["owner", db, String(ctx.seed)]);
    if (!await settle(owner) || !owner.exited?.success) {
      fail("setup", `the owner child failed: ${owner.describe()}`);
    }
    start = join(dir, "start.db");
    copyDb(db, start);
  }
  const intentsPath = join(dir, "intents.jsonl");
  const acksPath = join(dir, "acks.jsonl");
  if (!problems.length) {
    await ctx.crashImage?.beforeChild?.(dir, db);
    child = spawnSweepChild(
      ctx,
      dir,
      ["run", db, intentsPath, acksPath, String(ctx.seed), state.program.join("+")],
      { ...ctx.crashImage?.childEnv?.(dir), SESSION_DB_CRASH_AT: `${state.point}@${state.k}` },
      ctx.crashImage?.spawn?.bind(ctx.crashImage),
    );
    endedOnItsOwn = await settle(child);
  }
  const childMs = performance.now() - started;
  const checked = performance.now();

  let covered = false;
  let match: StateOutcome["match"];
  const intents = readAckJournal<{ i: number; op: string }>(intentsPath);
  const acks = readAckJournal<{ i: number; op: string; result: unknown }>(acksPath);
  let recovered: { state: StoreState; invariants: string[] } | undefined;
  let imageDiffers: boolean | undefined;
  let candidates: { without?: StoreState; with?: StoreState } = {};
  if (child && !endedOnItsOwn) {
    fail(
      "not reached",
      `the child did not exit within ${CHILD_DEADLINE_MS} ms: ${child.describe()}`,
    );
  } else if (child) {
    const exit = classifyExit(child.exited!);
    const interrupted = acks.length;
    if (exit.kind === "won") {
      fail(
        "not reached",
        `the child ran all ${state.program.length} operations (${
          state.program.join("+")
        }) without reaching ${state.point} ${state.k} time(s); the program must reach it`,
      );
    } else if (exit.kind !== "killed") {
      fail("child crashed", `the child failed before the crash point: ${child.describe()}`);
    } else if (intents.length !== interrupted + 1) {
      fail(
        "journal",
        `${intents.length} intents and ${interrupted} acknowledgements: a crash point fires inside an operation`,
      );
    } else if (!owns(state.program[interrupted]!, state.point)) {
      fail(
        "not reached",
        `SIGKILL in operation ${interrupted} (${state.program[interrupted]}), which does not call ${
          methodOf(state.point)
        }`,
      );
    } else if (state.expectedOp !== undefined && interrupted !== state.expectedOp) {
      fail(
        "not reached",
        `SIGKILL in operation ${interrupted}, not in the last one (${state.expectedOp}): ` +
          `${state.point} is reached more often per call than hitsPerCall says`,
      );
    } else {
      covered = true;
      const op = state.program[interrupted]!;
      const clause = CLAUSES[op];
      if (ctx.keepEvidence) {
        Deno.mkdirSync(join(dir, "crashed"));
        copyDb(db, join(dir, "crashed", "store.db"), ["", "-journal", "-wal", "-shm"]);
      }
      let checkedDb = db;
      try {
        if (ctx.crashImage) {
          const built = await ctx.crashImage.image(dir, db);
          checkedDb = typeof built === "string" ? built : built.db;
          imageDiffers = typeof built === "string" ? undefined : built.differs;
        }
      } catch (error) {
        checkedDb = "";
        fail(
          "crash image",
          `cannot build the ${ctx.crashImage!.name}: ${
            error instanceof Error ? error.message : String(error)
          }`,
        );
      }
      if (checkedDb) {
        try {
          const onDisk = onDiskJournalMode(checkedDb);
          if (ctx.leg.name !== "default" && onDisk !== ctx.leg.name) {
            fail("leg", `the file is in ${onDisk} mode after the crash, not ${ctx.leg.name}`);
          }
          recovered = await recover(ctx, checkedDb);
          const again = await recover(ctx, checkedDb);
          if (!same(again.state, recovered.state)) {
            fail(
              "recovery determinism",
              `a second recovery read another state: ${
                diff(again.state, recovered.state).join("; ")
              }`,
            );
          }
          const ref = await reference(ctx, state.program, start);
          const without = ref.snaps[interrupted]!;
          const withOp = ref.snaps[interrupted + 1]!;
          candidates = { without, with: withOp };
          for (const ack of acks) {
            if (!same(ack.result, ref.results[ack.i])) {
              fail(
                clause,
                `acknowledged operation ${ack.i} (${ack.op}) returned ${
                  JSON.stringify(ack.result)
                }, the uncrashed run ${JSON.stringify(ref.results[ack.i])}`,
              );
            }
          }
          const isWithout = same(recovered.state, without);
          const isWith = same(recovered.state, withOp);
          // An operation that changes nothing (a takeover with nothing to take) matches both.
          if (isWithout && isWith) match = "unchanged";
          else if (isWithout) match = "without";
          else if (isWith) match = "with";
          else {
            // Durability: a state an earlier operation left means acknowledged ones were lost.
            const earlier = ref.snaps.slice(0, interrupted).findLastIndex((snap) =>
              same(recovered!.state, snap)
            );
            if (earlier !== -1) {
              fail(
                "durability",
                `acknowledged operation${interrupted - earlier > 1 ? "s" : ""} ${
                  Array.from({ length: interrupted - earlier }, (_, j) =>
                    `${earlier + j} (${state.program[earlier + j]})`).join(", ")
                } lost: the recovered state is the one before operation ${earlier}`,
              );
            }
            fail(
              clause,
              `the interrupted ${op} (operation ${interrupted}) is neither absent nor complete: ` +
                `against the state without it: ${diff(recovered.state, without).join("; ")}; ` +
                `against the state with it: ${diff(recovered.state, withOp).join("; ")}`,
            );
          }
          if (state.point.endsWith(":afterCommit") && match === "without") {
            fail(clause, `${op} committed before the crash, but the recovered state lacks it`);
          }
          const orphaned = orphans(recovered.state);
          if (orphaned.length) {
            fail(
              "rotation atomicity",
              `compression orphan: ${
                orphaned.join(", ")
              } ended by compression without a continuation`,
            );
          }
          // The cross-cutting checks after the owning clause, so a failure is named by its clause.
          const integrity = integrityCheck(checkedDb);
          if (integrity !== "ok") fail("integrity", `integrity_check: ${integrity}`);
          if (recovered.invariants.length) {
            fail("invariants", recovered.invariants.join("; "));
          }
          if (op === "rotate" && match === "with") {
            // Last: the probe writes. A rotated parent must refuse appends with the typed error.
            const rotated = withOp.sessions.find((s) => s.id === ref.results[interrupted])?.parent;
            const store = await ctx.openStore(checkedDb);
            try {
              await store.appendMessage(rotated!, { role: "user", content: "after rotation" });
              fail("rotation atomicity", `an append to the rotated parent ${rotated} was accepted`);
            } catch (error) {
              const name = error instanceof Error ? error.name : String(error);
              if (name !== "CompressionSessionClosedError") {
                fail(
                  "rotation atomicity",
                  `an append to the rotated parent ${rotated} failed with ${name}, not CompressionSessionClosedError`,
                );
              }
            } finally {
              await store.close();
            }
          }
        } catch (error) {
          fail(
            "recovery",
            `cannot check the recovered store: ${
              error instanceof Error ? error.stack ?? error.message : String(error)
            }`,
          );
        }
      }
    }
  }

  const checkMs = performance.now() - checked;
  if (!problems.length) {
    Deno.removeSync(dir, { recursive: true });
    return {
      state,
      covered,
      ...(match ? { match } : {}),
      ...(imageDiffers !== undefined ? { imageDiffers } : {}),
      childMs,
      checkMs,
    };
  }
  const replay = replayCommand(ctx, state);
  const failure: SweepFailure = {
    state: state.id,
    leg: ctx.leg.name,
    point: state.point,
    k: state.k,
    clause: problems[0]!.clause,
    problems: problems.map((p) => `${p.clause}: ${p.text}`),
    replay,
  };
  if (ctx.keepEvidence) {
    Deno.writeTextFileSync(
      join(dir, "evidence.json"),
      JSON.stringify(
        {
          ...failure,
          target: ctx.target,
          library: ctx.leg.library,
          sqliteVersion: ctx.leg.sqliteVersion,
          seed: ctx.seed,
          program: state.program,
          crashAt: `${state.point}@${state.k}`,
          exit: child?.exited ?? null,
          command: child?.commandLine ?? owner?.commandLine,
          stderr: child?.stderr ?? owner?.stderr,
          intents,
          acks,
          recovered: recovered ?? null,
          candidates,
          image: ctx.crashImage?.name ?? "the files as the child left them",
          imageDiffers: imageDiffers ?? null,
          note: "crashed/ holds the files as the child left them, before recovery" +
            (ctx.crashImage
              ? "; baseline/ the start state, vfs.log the recording, last-sync/ the image checked"
              : ""),
          keptAt: new Date().toISOString(),
        },
        null,
        2,
      ) + "\n",
    );
    failure.evidence = dir;
  } else {
    Deno.removeSync(dir, { recursive: true });
  }
  return {
    state,
    covered,
    failure,
    ...(imageDiffers !== undefined ? { imageDiffers } : {}),
    childMs,
    checkMs,
  };
}

async function sweepLeg(
  name: LegName,
  target: string,
  options: SweepOptions,
  seed: number,
): Promise<LegSweep> {
  const started = performance.now();
  const log = options.log ?? console.log;
  const leg: Leg = { name, library: sqliteLibraryPath(), sqliteVersion: sqliteVersion() };
  const root = await RunDir.create(`sweep-${name}`);
  const template = root.file("template.db");
  const module = await loadTarget(target);
  const storeOptions: StoreOptions = name === "default" ? {} : { journalMode: name };
  const ctx: LegContext = {
    leg,
    target,
    seed,
    root,
    template,
    openStore: async (path) => await module.openStore(path, storeOptions) as SweepStore,
    references: new Map(),
    keepEvidence: options.keepEvidence ?? true,
    ...(options.crashImage ? { crashImage: options.crashImage } : {}),
  };
  const empty: LegSweep = {
    leg: name,
    status: "SKIP",
    pointsTotal: 0,
    pointsCovered: 0,
    uncovered: [],
    notApplicable: [],
    pointStates: 0,
    sequenceStates: 0,
    sequenceSpace: { sequences: 0, states: 0 },
    states: 0,
    matched: { without: 0, with: 0, unchanged: 0 },
    failures: [],
    seconds: 0,
    meanChildMs: 0,
    meanCheckMs: 0,
  };

  // Seed the template in a child on the leg (as the cells' probe does), then audit it.
  const setup = spawnSweepChild(ctx, root.path, ["setup", template, String(seed)]);
  if (!await settle(setup) || !setup.exited?.success) {
    const reason = `the store could not be seeded on leg ${name}: ${setup.describe()}`;
    if (ctx.keepEvidence) await root.finish(false, { leg: name, reason });
    else await Deno.remove(root.path, { recursive: true }).catch(() => {});
    log(`leg ${name.padEnd(7)} FAIL: ${reason}`);
    return { ...empty, status: "RUN", reason, seconds: (performance.now() - started) / 1000 };
  }
  const { methods, crashPoints } = JSON.parse(setup.stdout.trim().split("\n").at(-1)!) as {
    methods: string[];
    crashPoints: string[];
  };
  const onDisk = onDiskJournalMode(template);
  if (name !== "default" && onDisk !== name) {
    const reason =
      `leg ${name} not honoured: the store left the file in ${onDisk} mode on SQLite ${leg.sqliteVersion}`;
    await Deno.remove(root.path, { recursive: true });
    log(`leg ${name.padEnd(7)} SKIP: ${reason}`);
    return { ...empty, reason, onDisk, seconds: (performance.now() - started) / 1000 };
  }
  const points = [...new Set(crashPoints)];

  let planned: PlannedState[];
  let uncovered: { point: string; reason: string }[] = [];
  let notApplicable: { point: string; reason: string }[] = [];
  const sequencePlan = planSequenceStates(points, methods, options);
  const space = { sequences: sequencePlan.sequences, states: sequencePlan.states.length };
  const selectedPoints = points.filter((p) => selected(p, options.points));
  if (options.states?.length) {
    planned = options.states.map(parseStateId);
  } else {
    const pointPlan = planPointStates(points, methods, options);
    uncovered = pointPlan.uncovered;
    notApplicable = pointPlan.notApplicable;
    const mode = options.sequences ?? "sample";
    const sequences = mode === "none"
      ? []
      : mode === "full"
      ? sequencePlan.states
      : sample(sequencePlan.states, options.sample ?? 100, seed);
    planned = [...pointPlan.states, ...sequences];
  }
  if (planned.length === 0) {
    // Nothing to sweep is not a pass: say why instead.
    const reason = selectedPoints.length
      ? `no selected crash point is applicable: ${notApplicable.map((u) => u.reason).join("; ")}`
      : `the target lists no crash points${
        options.points?.length ? ` matching ${options.points.join(", ")}` : ""
      } (export crashPoints() from the target module to be swept)`;
    await Deno.remove(root.path, { recursive: true });
    log(`leg ${name.padEnd(7)} SKIP: ${reason}`);
    return {
      ...empty,
      reason,
      onDisk,
      notApplicable,
      seconds: (performance.now() - started) / 1000,
    };
  }
  const pointCount = planned.filter((s) => s.kind === "point").length;
  const sequenceCount = planned.length - pointCount;
  log(
    `leg ${
      name.padEnd(7)
    } (SQLite ${leg.sqliteVersion}, on-disk ${onDisk}): ${selectedPoints.length} ` +
      `crash points, ${pointCount} point states; sequences: ${space.sequences} up to length ${
        options.maxLength ?? 3
      }, full space ${space.states} states, this run ${sequenceCount}`,
  );

  const outcomes: StateOutcome[] = [];
  let next = 0;
  let lastProgress = performance.now();
  const worker = async () => {
    while (next < planned.length) {
      const n = next++;
      const outcome = await runState(ctx, planned[n]!, n);
      outcomes.push(outcome);
      if (outcome.failure) {
        log(`  FAIL ${outcome.state.id} [${name}]: ${outcome.failure.problems.join(" | ")}`);
        if (outcome.failure.evidence) log(`    evidence: ${outcome.failure.evidence}`);
        log(`    replay: ${outcome.failure.replay}`);
      }
      if (performance.now() - lastProgress > 5000) {
        lastProgress = performance.now();
        log(`  … ${outcomes.length}/${planned.length} states`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.jobs ?? 2) }, worker));
  // In plan order, whatever order the workers finished in: the report is reproducible.
  const order = new Map(planned.map((s, i) => [s, i]));
  outcomes.sort((a, b) => order.get(a.state)! - order.get(b.state)!);

  // A point is covered when every occurrence killed the child in an operation owning it.
  const pointStates = outcomes.filter((o) => o.state.kind === "point");
  const byPoint = new Map<string, StateOutcome[]>();
  for (const o of pointStates) {
    byPoint.set(o.state.point, [...(byPoint.get(o.state.point) ?? []), o]);
  }
  const pointsTotal = options.states?.length
    ? byPoint.size
    : selectedPoints.length - notApplicable.length;
  let pointsCovered = 0;
  for (const [point, list] of byPoint) {
    const missed = list.filter((o) => !o.covered);
    if (missed.length === 0) pointsCovered++;
    else {
      uncovered.push({
        point,
        reason: `not reached at ${missed.map((o) => `@${o.state.k}`).join(", ")}: ${
          missed[0]!.failure?.problems[0] ?? "?"
        }`,
      });
    }
  }
  const failures = outcomes.filter((o) => o.failure).map((o) => o.failure!);
  const seconds = (performance.now() - started) / 1000;
  const mean = (f: (o: StateOutcome) => number) =>
    outcomes.length ? Math.round(outcomes.reduce((s, o) => s + f(o), 0) / outcomes.length) : 0;
  const result: LegSweep = {
    leg: name,
    status: "RUN",
    onDisk,
    pointsTotal,
    pointsCovered,
    uncovered,
    notApplicable,
    pointStates: pointStates.length,
    sequenceStates: outcomes.length - pointStates.length,
    sequenceSpace: space,
    states: outcomes.length,
    matched: {
      without: outcomes.filter((o) => o.match === "without").length,
      with: outcomes.filter((o) => o.match === "with").length,
      unchanged: outcomes.filter((o) => o.match === "unchanged").length,
    },
    ...(ctx.crashImage
      ? {
        imaged: {
          states: outcomes.filter((o) => o.imageDiffers !== undefined).length,
          differing: outcomes.filter((o) => o.imageDiffers).length,
        },
      }
      : {}),
    failures,
    seconds,
    meanChildMs: mean((o) => o.childMs),
    meanCheckMs: mean((o) => o.checkMs),
  };
  if (!ctx.keepEvidence) await Deno.remove(root.path, { recursive: true }).catch(() => {});
  else {await root.finish(failures.length === 0 && uncovered.length === 0, {
      library: leg.library,
      sqliteVersion: leg.sqliteVersion,
      target,
      seed,
      ...result,
    });}
  log(
    `leg ${name.padEnd(7)} points ${pointsCovered}/${pointsTotal} covered (100% needed), ` +
      `${result.states} states (${result.pointStates} point, ${result.sequenceStates} sequence; ` +
      `interrupted op absent ${result.matched.without}, complete ${result.matched.with}, ` +
      `no-op ${result.matched.unchanged}), ` +
      (result.imaged
        ? `${result.imaged.differing}/${result.imaged.states} images dropped unsynced writes, `
        : "") +
      `${failures.length} failed, ${seconds.toFixed(1)} s, ${
        (result.states / seconds).toFixed(1)
      } states/s (child ${result.meanChildMs} ms, check ${result.meanCheckMs} ms per state)`,
  );
  for (const u of uncovered) log(`  UNCOVERED ${u.point} [${name}]: ${u.reason}`);
  for (const u of notApplicable) log(`  N/A ${u.point} [${name}]: ${u.reason}`);
  return result;
}

/**
 * Runs the crash sweep on the SQLite library this process loaded: for every honoured
 * leg, every selected crash point × occurrence, and the bounded sequences.
 *
 * @param options Target, legs, points, sequences, seed, jobs.
 * @returns The report: coverage, states, states per second, failures with evidence.
 * @throws {Error} When `SESSION_DB_CRASH_AT` is set in this process (the sweep arms each
 * child itself), or the default leg is asked for while `SESSION_DB_JOURNAL_MODE` is set.
 * @example
 * ```ts
 * import { sweep } from "./sweep.ts";
 * const report = await sweep({ legs: ["delete"], points: ["appendMessage:"], sequences: "none" });
 * console.log(report.legs[0]?.pointsCovered, report.statesPerSecond);
 * ```
 */
export async function sweep(options: SweepOptions = {}): Promise<SweepReport> {
  if (Deno.env.get("SESSION_DB_CRASH_AT")) {
    throw new Error(
      "Cannot sweep: SESSION_DB_CRASH_AT is set in this process (unset it; the sweep arms each child itself)",
    );
  }
  const legs = options.legs ?? LEGS;
  const envLeg = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  if (envLeg && legs.includes("default")) {
    throw new Error(
      `Cannot sweep the default leg: SESSION_DB_JOURNAL_MODE=${envLeg} is set in this process, so its own opens would not be on the default leg (unset it, or sweep --legs ${envLeg})`,
    );
  }
  const target = targetSpecifier(options.target ?? REFERENCE_TARGET);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const log = options.log ?? console.log;
  log(
    `sweep: seed ${seed} (replay with --seed ${seed}); target ${target}; checking ${
      options.crashImage?.name ?? "the files the SIGKILLed child left"
    }`,
  );
  const started = performance.now();
  const results: LegSweep[] = [];
  for (const leg of legs) results.push(await sweepLeg(leg, target, options, seed));
  const seconds = (performance.now() - started) / 1000;
  const states = results.reduce((s, l) => s + l.states, 0);
  const failing = new Map<string, number>();
  for (const f of results.flatMap((l) => l.failures)) {
    failing.set(f.point, (failing.get(f.point) ?? 0) + 1);
  }
  return {
    target,
    seed,
    library: sqliteLibraryPath(),
    sqliteVersion: sqliteVersion(),
    image: options.crashImage?.name ?? "process crash (SIGKILL; the page cache survives)",
    legs: results,
    states,
    seconds,
    statesPerSecond: seconds > 0 ? states / seconds : 0,
    failingPoints: [...failing].map(([point, n]) => ({ point, states: n })),
    ok: results.some((l) => l.status === "RUN") &&
      results.every((l) =>
        l.status === "SKIP" || (l.failures.length === 0 && l.uncovered.length === 0 && !l.reason)
      ),
  };
}

function parseArgs(args: string[]) {
  const options: SweepOptions & { libraries?: string[]; json: string; summary: boolean } = {
    json: join(ROOT, ".cache/sweep/report.json"),
    summary: true,
  };
  for (const [flag, value] of flagsOf(args)) {
    const number = (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0) fail(`Invalid ${flag} "${v}": use a whole number`);
      return n;
    };
    if (flag === "--target") {
      const t = value();
      options.target = targetSpecifier(t);
    } else if (flag === "--legs") {
      options.legs = legListArg(value());
    } else if (flag === "--libraries") options.libraries = value().split(",");
    else if (flag === "--points") options.points = value().split(",");
    else if (flag === "--k") {
      options.occurrences = value().split(",").map(number).filter((k) => k >= 1);
    } else if (flag === "--full") options.sequences = "full";
    else if (flag === "--no-sequences") options.sequences = "none";
    else if (flag === "--sample") options.sample = number(value());
    else if (flag === "--max-length") options.maxLength = number(value());
    else if (flag === "--seed") options.seed = number(value());
    else if (flag === "--state") options.states = value().split(",");
    else if (flag === "--jobs") options.jobs = Math.max(1, number(value()));
    else if (flag === "--json") options.json = resolve(value());
    else if (flag === "--no-summary") options.summary = false;
    else if (flag === "--power-loss") options.crashImage = lastSyncImage();
    else {
      fail(
        `Invalid argument "${flag}": use --target, --legs, --libraries, --points, --k, --full, ` +
          `--sample, --no-sequences, --max-length, --seed, --state, --jobs, --json, --power-loss ` +
          `or --no-summary`,
      );
    }
  }
  for (const id of options.states ?? []) {
    try {
      parseStateId(id);
    } catch (error) {
      fail((error as Error).message);
    }
  }
  return options;
}

function libraryPath(label: string): string | undefined {
  if (label === "fixed") return fixedSqlitePath();
  if (label === "system") {
    const system = systemLibraryPath();
    return system;
  }
  return label.includes("/") ? resolve(label) : fail(
    `Unknown library "${label}": use system, fixed or a path to a SQLite shared library`,
  );
}

function summaryTable(reports: SweepReport[]): string {
  const head = ["library", "SQLite", "leg", "points covered", "states", "states/s", "result"];
  const body = reports.flatMap((r) =>
    r.legs.map((l) => [
      r.library.split("/").slice(-2).join("/"),
      r.sqliteVersion,
      l.leg,
      l.status === "SKIP"
        ? "-"
        : `${l.pointsCovered}/${l.pointsTotal}${
          l.pointsTotal ? ` (${Math.round((100 * l.pointsCovered) / l.pointsTotal)}%)` : ""
        }`,
      l.status === "SKIP" ? "-" : `${l.states} (${l.pointStates} + ${l.sequenceStates} seq)`,
      l.status === "SKIP" || !l.seconds ? "-" : (l.states / l.seconds).toFixed(1),
      l.status === "SKIP"
        ? `SKIP: ${l.reason}`
        : l.failures.length || l.uncovered.length || l.reason
        ? `FAIL: ${l.failures.length} states, ${l.uncovered.length} uncovered${
          l.reason ? `; ${l.reason.split("\n")[0]}` : ""
        }`
        : "PASS",
    ])
  );
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
}

if (import.meta.main) {
  const options = parseArgs(Deno.args);
  if (Deno.env.get("SESSION_DB_CRASH_AT")) {
    fail("Cannot sweep: SESSION_DB_CRASH_AT is set (unset it; the sweep arms each child itself)");
  }
  const envLeg = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  if (envLeg) {
    // The variable names the leg to sweep; this process's own opens pass it explicitly.
    try {
      options.legs ??= [parseLeg(envLeg)];
    } catch (error) {
      fail((error as Error).message);
    }
    Deno.env.delete("SESSION_DB_JOURNAL_MODE");
  }
  options.seed ??= Math.floor(Math.random() * 2 ** 31);
  const reports: SweepReport[] = [];
  if (!options.libraries) {
    try {
      reports.push(await sweep(options));
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error));
    }
  } else {
    // One process per library: the FFI binding loads one library per process.
    const forward = Deno.args.flatMap((arg, i, all) =>
      arg === "--libraries" || all[i - 1] === "--libraries" || arg === "--json" ||
        all[i - 1] === "--json" || arg === "--seed" || all[i - 1] === "--seed"
        ? []
        : [arg]
    );
    if (envLeg && !Deno.args.includes("--legs")) forward.push("--legs", options.legs!.join(","));
    for (const label of options.libraries) {
      const path = libraryPath(label);
      if (!path || !exists(path)) {
        console.error(
          `sweep: the ${label} library is not available${
            label === "fixed" ? " (build it with deno task sqlite)" : ""
          }; skipping it`,
        );
        continue;
      }
      const json = await Deno.makeTempFile({ prefix: "sweep-", suffix: ".json" });
      const env: Record<string, string> = { DENO_SQLITE_PATH: path, NO_COLOR: "1" };
      for (const name of ["PATH", "HOME", "DENO_DIR", "CELLS_EVIDENCE_DIR", "TMPDIR"]) {
        const v = Deno.env.get(name);
        if (v !== undefined) env[name] = v;
      }
      const status = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "--allow-read",
          "--allow-write",
          "--allow-env",
          "--allow-ffi",
          "--allow-run",
          "--allow-sys",
          fileURLToPath(import.meta.url),
          ...forward,
          "--seed",
          String(options.seed),
          "--json",
          json,
          "--no-summary",
        ],
        cwd: ROOT,
        clearEnv: true,
        env,
        stdout: "inherit",
        stderr: "inherit",
      }).output();
      try {
        const sub = JSON.parse(await Deno.readTextFile(json)) as { reports: SweepReport[] };
        reports.push(...sub.reports);
      } catch {
        console.error(`sweep: the ${label} library's run wrote no report (exit ${status.code})`);
        reports.push({
          target: targetSpecifier(options.target ?? REFERENCE_TARGET),
          seed: options.seed,
          library: path,
          sqliteVersion: "?",
          image: "",
          legs: [],
          states: 0,
          seconds: 0,
          statesPerSecond: 0,
          failingPoints: [],
          ok: false,
        });
      }
      await Deno.remove(json).catch(() => {});
    }
  }
  const states = reports.reduce((s, r) => s + r.states, 0);
  const seconds = reports.reduce((s, r) => s + r.seconds, 0);
  const ok = reports.length > 0 && reports.every((r) => r.ok);
  await Deno.mkdir(join(options.json, ".."), { recursive: true });
  await Deno.writeTextFile(
    options.json,
    JSON.stringify({ date: new Date().toISOString(), seed: options.seed, reports }, null, 2) + "\n",
  );
  if (!options.summary) Deno.exit(ok ? 0 : 1);
  console.log(`\n${summaryTable(reports)}\n`);
  const failing = reports.flatMap((r) =>
    r.failingPoints.map((p) => `${p.point} (${p.states} states, SQLite ${r.sqliteVersion})`)
  );
  if (failing.length) console.log(`failing crash points: ${failing.join(", ")}`);
  console.log(
    `sweep${options.crashImage ? " --power-loss" : ""}: ${states} states in ${
      seconds.toFixed(1)
    } s (${seconds ? (states / seconds).toFixed(1) : "0"} states/s), seed ${options.seed}, ${
      ok ? "PASS" : "FAIL"
    }; report: ${options.json}`,
  );
  Deno.exit(ok ? 0 : 1);
}
