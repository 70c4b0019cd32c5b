// The crash sweep's vocabulary, shared by its files without importing one another: the
// options, the crash-image hook the power-loss variant plugs into, and the report.
import type { Child, SpawnOptions } from "../../../harness/child.ts";
import type { LegName } from "../../../harness/legs.ts";
import type { Profile } from "../../../recorder/crash_states.ts";
import type { PatternId } from "../../../cells/engine/diagnoses.ts";

/**
 * The power-loss hook: how a crash state is turned into the files the oracle checks.
 * Unset, the sweep checks what the SIGKILLed child left (the page cache survives). The
 * power-loss variant (`_power_loss.ts`, `--power-loss`) plugs in here: it
 * runs the child under the LD_PRELOAD recorder (`childEnv`), keeps a baseline (`beforeChild`)
 * and builds the last-sync image (`image`). Each hook's `stateDir` is the state's store
 * folder (the store's files alone); the hooks keep their own files beside it.
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

/** Options of `sweep` (`sweep.ts`). */
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
  /**
   * Only the suite failed: the recorder's model could not follow the run (its log, or a
   * replay that differs from the disk). An ERROR, never a verdict on the store.
   */
  harness?: true;
}

/** The sweep of one leg. */
export interface LegSweep {
  /** The leg. */
  leg: LegName;
  /** `RUN`, or `SKIP` when the leg was not honoured or the store could not be seeded. */
  status: "RUN" | "SKIP";
  /** Why it was skipped. */
  reason?: string;
  /** The journal modes observed: the seeded store at rest, then the child at every kill. */
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
  /** Per clause (the clause of each state's crash point; an uncovered point fails its clause). */
  clauses?: Record<string, ClauseTally>;
  /** Wall time of the leg. */
  seconds: number;
  /** Mean child run and check times per state, for profiling. */
  meanChildMs: number;
  /** Mean check time per state. */
  meanCheckMs: number;
}

/** The report of `sweep` (`sweep.ts`). */
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

/** Options of the recorded-call sweep (`sweepCalls` in `calls.ts`). */
export interface CallSweepOptions {
  /** The target specifier. */
  target: string;
  /** The leg (default: `default`). */
  leg?: LegName;
  /** The seed of the message texts and of the random power-loss states. */
  seed: number;
  /** `crash` (SIGKILL before each recorded call, default) or `power-loss` (every sync point). */
  mode?: "crash" | "power-loss";
  /** The longest program (default 2). */
  maxLength?: number;
  /** Only these programs (operations joined by `+`), instead of every sequence. */
  programs?: readonly string[];
  /** Only programs whose every operation belongs to these cells' clauses. */
  cells?: readonly number[];
  /** Only this state of each program (crash: the call; power-loss: the state's number), for a replay. */
  call?: number;
  /** Crash mode: real SIGKILL children per program, as a cross-check (default 1). */
  kills?: number;
  /** Power-loss mode: the persistence profile (default `posix`). */
  profile?: Profile;
  /** Power-loss mode: random states per instant beyond the exhaustive bound (default 12). */
  subsets?: number;
  /** Power-loss mode: only the last N instants of each program (default all). */
  instants?: number;
  /** Recovered states continued by a fresh process, per program (default 1). */
  resumes?: number;
  /** Shrink a failure (default true). */
  shrink?: boolean;
  /** Children in flight at once (default 2). */
  jobs?: number;
  /** Progress lines (default `console.log`). */
  log?: (line: string) => void;
}

/** One failing state of the recorded-call sweep. */
export interface CallFailure {
  /** The program, operations joined by `+`. */
  program: string;
  /** The state's number in the program (crash: SIGKILL before this recorded call). */
  call: number;
  /** The operation the crash interrupted (its index), or -1 for the run as a whole. */
  operation: number;
  /** The clause it breaks (its interrupted operation's). */
  clause: string;
  /** How the state was made. */
  state: string;
  /**
   * What failed: a derived `state`, a real SIGKILL `child`, the second life of a
   * `resume`, or the program's `run` as a whole (its uncrashed run, its log).
   */
  kind: "state" | "child" | "resume" | "run";
  /** What failed, one line each. */
  problems: string[];
  /** The command that replays it. */
  replay: string;
  /** A power loss's known pattern, read from the program's recorded calls. */
  pattern?: PatternId;
  /** Where its files were kept. */
  evidence?: string;
  /**
   * Only the suite failed: the recorder's model could not follow the run (its log, or a
   * replay that differs from the disk). An ERROR, never a verdict on the store.
   */
  harness?: true;
}

/** What one clause of the recorded-call sweep judged. */
export interface ClauseTally {
  /** Programs with an operation of the clause. */
  programs: number;
  /** States whose interrupted operation is the clause's. */
  states: number;
  /** Torn states among them (power-loss mode). */
  torn: number;
  /** Recovered states continued by a fresh process and judged again. */
  resumes: number;
  /** Failing states (and resumes). */
  failures: number;
}

/** The report of the recorded-call sweep. */
export interface CallSweepReport {
  /** The mode. */
  mode: "crash" | "power-loss";
  /** The leg. */
  leg: LegName;
  /** The target. */
  target: string;
  /** The seed. */
  seed: number;
  /** The SQLite library this process loaded (the oracle's). */
  library: string;
  /** Its version. */
  sqliteVersion: string;
  /** The journal modes observed. */
  onDisk: string;
  /** Why the leg was not honoured (the states are then no evidence). */
  notHonoured?: string;
  /** Programs recorded. */
  programs: number;
  /** States checked. */
  states: number;
  /** Distinct recovered contents the oracle ran on. */
  judged: number;
  /** Power-loss mode: torn states, instants with a tearable write, instants. */
  torn: { states: number; tearable: number; instants: number };
  /** Recovered states continued, their failures, and the distinct ones that could be. */
  resumes: { run: number; failed: number; candidates: number };
  /** Crash mode: real SIGKILL children run as a cross-check, and how many failed. */
  children: { run: number; failed: number };
  /** Seconds spent checking states (recording excluded). */
  seconds: number;
  /** States per second of checking. */
  statesPerSecond: number;
  /** Per clause. */
  clauses: Record<string, ClauseTally>;
  /** Failing states (the shrunk one first). */
  failures: CallFailure[];
  /** The run folder, kept when something failed. */
  dir?: string;
  /** Whether some state was judged, none failed and the leg was honoured. */
  ok: boolean;
}
