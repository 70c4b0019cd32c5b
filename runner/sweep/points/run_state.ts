// One named-point crash state, end to end: a copy of the leg's template (after a
// short-lived owner child when the program takes over a dead process's obligations), the
// crash child armed at the state's point, how it died, the oracle on what it left (or on
// its crash image), and the evidence of a failing state. One function per job.
import { dirname, join } from "node:path";
import { copyTree } from "../../../internal/fs.ts";
import { readAckJournal } from "../../../harness/ack_journal.ts";
import { type Child, classifyExit } from "../../../harness/child.ts";
import { isHarnessError } from "../../../harness/harness_error.ts";
import { type JournalObservation, observeJournalMode } from "../../../harness/legs.ts";
import { type Ack, checkRecovered, type Verdict } from "../core/oracle.ts";
import { judging } from "../../../internal/judging_beacon.ts";
import type { PlannedState } from "../core/plan.ts";
import { methodOf, needsDeadOwner, owns } from "../core/program.ts";
import {
  CHILD_DEADLINE_MS,
  type LegContext,
  reference,
  REFERENCE_TARGET,
  settle,
  spawnSweepChild,
} from "../core/state_child.ts";
import type { SweepFailure } from "../core/types.ts";

/** How one state went. */
export interface StateOutcome {
  /** The state. */
  state: PlannedState;
  /** Whether the child died at the point, in the operation that owns it. */
  covered: boolean;
  /** How the recovered state matched the candidates. */
  match?: "without" | "with" | "unchanged";
  /** Its failure, when it failed. */
  failure?: SweepFailure;
  /** With a crash image: whether the image differed from the files the child left. */
  imageDiffers?: boolean;
  /** The journal mode the child ran in, observed the instant it was killed. */
  observation?: JournalObservation;
  /** Time from the start of the state to the child's end. */
  childMs: number;
  /** Time of the checks. */
  checkMs: number;
}

/** A problem of one state, under its clause. */
interface Problem {
  clause: string;
  text: string;
  /** Only the suite failed (a crash image the recorder's model could not build). */
  harness?: true;
}

/** Notes a problem of a clause; `harness` when only the suite failed. */
type Fail = (clause: string, text: string, harness?: true) => void;

/** One state's folder, files and what its run left. */
interface StateRun {
  dir: string;
  db: string;
  /** The database the program starts from (the template, or what the owner child left). */
  start: string;
  owner?: Child;
  child?: Child;
  /** Whether the crash child ended before its deadline. */
  ended: boolean;
  intents: { i: number; op: string }[];
  acks: Ack[];
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, "'\\''")}'`;
}

function replayCommand(ctx: LegContext, state: PlannedState): string {
  const parts = ["deno", "task", "sweep"];
  if (ctx.target !== REFERENCE_TARGET) parts.push("--target", shellQuote(ctx.target));
  parts.push("--libraries", shellQuote(ctx.leg.library));
  if (ctx.crashImage?.flag) parts.push(ctx.crashImage.flag);
  parts.push("--legs", ctx.leg.name, "--seed", String(ctx.seed), "--state", shellQuote(state.id));
  return parts.join(" ");
}

/** The state's folder with the start state in place (an owner child's, when the program needs one). */
async function prepare(
  ctx: LegContext,
  state: PlannedState,
  n: number,
  fail: Fail,
): Promise<StateRun> {
  const dir = Deno.makeTempDirSync({
    dir: ctx.root.path,
    prefix: `${String(n).padStart(4, "0")}-${state.id.replace(/[^\w.@+-]/g, "_")}-`,
  });
  // The store's folder holds its files alone: a store may name files beside its path
  // its own way, so the template's folder is copied whole.
  const db = join(dir, "db", "store.db");
  copyTree(dirname(ctx.template), dirname(db));
  const run: StateRun = { dir, db, start: ctx.template, ended: true, intents: [], acks: [] };
  if (needsDeadOwner(state.program)) {
    // Obligations of a process that has just exited (a pid recycled since the template
    // was built could look alive): the start state of this one run.
    run.owner = spawnSweepChild(ctx, ["owner", db, String(ctx.seed)], { dir });
    if (!await settle(run.owner) || !run.owner.exited?.success) {
      fail("setup", `the owner child failed: ${run.owner.describe()}`);
    }
    run.start = join(dir, "start", "store.db");
    copyTree(dirname(db), dirname(run.start));
  }
  return run;
}

/** Runs the crash child armed at the state's point and reads its journals. */
async function crash(ctx: LegContext, state: PlannedState, run: StateRun): Promise<void> {
  const intentsPath = join(run.dir, "intents.jsonl");
  const acksPath = join(run.dir, "acks.jsonl");
  await ctx.crashImage?.beforeChild?.(dirname(run.db), run.db);
  run.child = spawnSweepChild(
    ctx,
    ["run", run.db, intentsPath, acksPath, String(ctx.seed), state.program.join("+")],
    {
      dir: run.dir,
      env: {
        ...ctx.crashImage?.childEnv?.(dirname(run.db)),
        SESSION_DB_CRASH_AT: `${state.point}@${state.k}`,
      },
      spawn: ctx.crashImage?.spawn?.bind(ctx.crashImage),
    },
  );
  run.ended = await settle(run.child);
  run.intents = readAckJournal<{ i: number; op: string }>(intentsPath);
  run.acks = readAckJournal<Ack>(acksPath);
}

/**
 * Whether the child died by SIGKILL at the point, in the operation that owns it (the
 * state is then covered); else why not, as a problem.
 */
function killedAtPoint(state: PlannedState, run: StateRun): Problem | undefined {
  const child = run.child!;
  if (!run.ended) {
    return {
      clause: "not reached",
      text: `the child did not exit within ${CHILD_DEADLINE_MS} ms: ${child.describe()}`,
    };
  }
  const exit = classifyExit(child.exited!);
  const interrupted = run.acks.length;
  if (exit.kind === "won") {
    return {
      clause: "not reached",
      text: `the child ran all ${state.program.length} operations (${
        state.program.join("+")
      }) without reaching ${state.point} ${state.k} time(s); the program must reach it`,
    };
  }
  if (exit.kind !== "killed") {
    return {
      clause: "child crashed",
      text: `the child failed before the crash point: ${child.describe()}`,
    };
  }
  if (run.intents.length !== interrupted + 1) {
    return {
      clause: "journal",
      text:
        `${run.intents.length} intents and ${interrupted} acknowledgements: a crash point fires inside an operation`,
    };
  }
  if (!owns(state.program[interrupted]!, state.point)) {
    return {
      clause: "not reached",
      text: `SIGKILL in operation ${interrupted} (${
        state.program[interrupted]
      }), which does not call ${methodOf(state.point)}`,
    };
  }
  if (state.expectedOp !== undefined && interrupted !== state.expectedOp) {
    return {
      clause: "not reached",
      text: `SIGKILL in operation ${interrupted}, not in the last one (${state.expectedOp}): ` +
        `${state.point} is reached more often per call than hitsPerCall says`,
    };
  }
  return undefined;
}

/** What the check of a covered state found. */
interface Checked {
  verdict: Verdict;
  imageDiffers?: boolean;
  observation: JournalObservation;
}

/** Observes the leg, builds the crash image when there is one, and runs the oracle. */
async function check(
  ctx: LegContext,
  state: PlannedState,
  run: StateRun,
  fail: Fail,
): Promise<Checked> {
  // The mode the child ran in, from the files it left, before anything reopens them.
  const observation = observeJournalMode(run.db, state.id);
  if (ctx.keepEvidence) {
    copyTree(dirname(run.db), join(run.dir, "crashed"));
  }
  let checkedDb = run.db;
  let imageDiffers: boolean | undefined;
  try {
    if (ctx.crashImage) {
      const built = await ctx.crashImage.image(dirname(run.db), run.db);
      checkedDb = typeof built === "string" ? built : built.db;
      imageDiffers = typeof built === "string" ? undefined : built.differs;
    }
  } catch (error) {
    fail(
      "crash image",
      `cannot build the ${ctx.crashImage!.name}: ${
        error instanceof Error ? error.message : String(error)
      }`,
      isHarnessError(error) ? true : undefined,
    );
    return { verdict: { candidates: {} }, observation };
  }
  const verdict = await judging(`a crash at ${state.id}`, () =>
    checkRecovered({
      openStore: ctx.openStore,
      state,
      interrupted: run.acks.length,
      acks: run.acks,
      db: checkedDb,
      reference: () => reference({ ...ctx, dir: ctx.root.path }, state.program, run.start),
      fail,
    }));
  return { verdict, observation, ...(imageDiffers !== undefined ? { imageDiffers } : {}) };
}

/** Keeps a failing state's evidence (or removes its folder) and names the failure. */
function failed(
  ctx: LegContext,
  state: PlannedState,
  run: StateRun,
  problems: Problem[],
  checked: Checked | undefined,
): SweepFailure {
  const failure: SweepFailure = {
    state: state.id,
    leg: ctx.leg.name,
    point: state.point,
    k: state.k,
    clause: problems[0]!.clause,
    problems: problems.map((p) => `${p.clause}: ${p.text}`),
    replay: replayCommand(ctx, state),
    ...(problems.every((p) => p.harness) ? { harness: true as const } : {}),
  };
  if (!ctx.keepEvidence) {
    Deno.removeSync(run.dir, { recursive: true });
    return failure;
  }
  const evidence = {
    ...failure,
    target: ctx.target,
    library: ctx.leg.library,
    sqliteVersion: ctx.leg.sqliteVersion,
    seed: ctx.seed,
    program: state.program,
    crashAt: `${state.point}@${state.k}`,
    exit: run.child?.exited ?? null,
    command: run.child?.commandLine ?? run.owner?.commandLine,
    stderr: run.child?.stderr ?? run.owner?.stderr,
    intents: run.intents,
    acks: run.acks,
    recovered: checked?.verdict.recovered ?? null,
    candidates: checked?.verdict.candidates ?? {},
    image: ctx.crashImage?.name ?? "the files as the child left them",
    imageDiffers: checked?.imageDiffers ?? null,
    journalMode: checked?.observation ?? null,
    note: "crashed/ holds the files as the child left them, before recovery" +
      (ctx.crashImage
        ? "; baseline/ the start state, <state>.fs.log beside it the recording, last-sync/ the image checked"
        : ""),
    keptAt: new Date().toISOString(),
  };
  Deno.writeTextFileSync(join(run.dir, "evidence.json"), JSON.stringify(evidence, null, 2) + "\n");
  return { ...failure, evidence: run.dir };
}

/**
 * Runs one crash state and checks it.
 *
 * @param ctx The leg.
 * @param state The state.
 * @param n Its index in the plan (names its folder).
 * @returns Whether it was covered, how it matched, its failure with evidence.
 */
export async function runState(
  ctx: LegContext,
  state: PlannedState,
  n: number,
): Promise<StateOutcome> {
  const started = performance.now();
  const problems: Problem[] = [];
  const fail: Fail = (clause, text, harness) =>
    problems.push({ clause, text, ...(harness ? { harness } : {}) });
  const run = await prepare(ctx, state, n, fail);
  if (!problems.length) await crash(ctx, state, run);
  const childMs = performance.now() - started;
  const checkStarted = performance.now();
  let checked: Checked | undefined;
  const death = run.child ? killedAtPoint(state, run) : undefined;
  if (death) problems.push(death);
  else if (run.child) checked = await check(ctx, state, run, fail);
  const covered = run.child !== undefined && death === undefined;
  const timing = {
    ...(checked?.imageDiffers !== undefined ? { imageDiffers: checked.imageDiffers } : {}),
    ...(checked ? { observation: checked.observation } : {}),
    childMs,
    checkMs: performance.now() - checkStarted,
  };
  if (!problems.length) {
    Deno.removeSync(run.dir, { recursive: true });
    const match = checked?.verdict.match;
    return { state, covered, ...(match ? { match } : {}), ...timing };
  }
  return { state, covered, failure: failed(ctx, state, run, problems, checked), ...timing };
}
