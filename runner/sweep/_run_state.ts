// One crash state of the sweep, end to end: a copy of the leg's template, the crash child
// armed at the state's point (after a short-lived owner child when the program takes over
// a dead process's obligations), the classification of how it died, the oracle on what
// it left (or on its crash image), and the evidence of a failing state.
import { join } from "node:path";
import { readAckJournal } from "../../harness/ack_journal.ts";
import {
  type Child,
  classifyExit,
  reapAll,
  spawnChild,
  type SpawnOptions,
} from "../../harness/child.ts";
import type { RunDir } from "../../harness/evidence.ts";
import {
  type JournalObservation,
  type Leg,
  legEnv,
  observeJournalMode,
} from "../../harness/legs.ts";
import type { ChildPermissions } from "../../harness/permissions.ts";
import { exists } from "../../internal/fs.ts";
import { targetAccess } from "../../cells/target_access.ts";
import { type Ack, checkRecovered, type Reference, type Verdict } from "./_oracle.ts";
import type { PlannedState } from "./_plan.ts";
import {
  methodOf,
  needsDeadOwner,
  owns,
  type ProgramOp,
  ProgramRunner,
  snapshot,
  type SweepStore,
} from "./_program.ts";
import type { CrashImage, SweepFailure } from "./_types.ts";

/** The reference store's target module, the sweep's default. */
export const REFERENCE_TARGET: string =
  new URL("../../cells/reference_target.ts", import.meta.url).href;
const CHILD = new URL("./children/sweep.ts", import.meta.url);
/** A child that has not died after this long is killed and its state failed. */
const CHILD_DEADLINE_MS = 30_000;

/** What every state of one leg shares. */
export interface LegContext {
  /** The leg and its library. */
  leg: Leg;
  /** The target module's specifier. */
  target: string;
  /** The seed of the message texts. */
  seed: number;
  /** The leg's run directory; each state gets a folder in it. */
  root: RunDir;
  /** The seeded store every state starts from. */
  template: string;
  /** Opens the store on the leg, in this process. */
  openStore: (path: string) => Promise<SweepStore>;
  /** The uncrashed runs, by start state and program (shared by the states). */
  references: Map<string, Promise<Reference>>;
  /** How crash states become the files checked (unset: as the child left them). */
  crashImage?: CrashImage;
  /** Keep failing states as evidence. */
  keepEvidence: boolean;
  /** The extra permissions the target declares for its children. */
  permissions?: ChildPermissions;
}

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

/**
 * Spawns the sweep's child script (`_child.ts`) on the leg with the target's access.
 *
 * @param ctx The leg.
 * @param dir The child's run directory.
 * @param args The mode, then its arguments after the target.
 * @param env Extra environment.
 * @param spawn How to spawn it (a crash image may preload a recorder).
 * @returns The running child.
 */
export function spawnSweepChild(
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
    ...(ctx.permissions ? { permissions: ctx.permissions } : {}),
  });
}

/** Awaits a child's exit, killing it at the deadline; `true` when it ended on its own. */
export async function settle(child: Child, deadlineMs = CHILD_DEADLINE_MS): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = await Promise.race([
    child.status.then(() => false),
    new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(true), deadlineMs)),
  ]);
  clearTimeout(timer);
  if (timedOut) await reapAll([child]);
  return !timedOut;
}

/** Copies a database with its journal or WAL (SQLite rebuilds the shm index). */
export function copyDb(from: string, to: string, suffixes = ["", "-journal", "-wal"]): void {
  for (const suffix of suffixes) {
    if (exists(from + suffix)) Deno.copyFileSync(from + suffix, to + suffix);
  }
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
    result = referenceRun(ctx.openStore, ctx.seed, program, start, ctx.root.path);
    ctx.references.set(key, result);
  }
  return result;
}

/**
 * Runs a program uncrashed in this process on a copy of `start` (in a folder made under
 * `under`): the state before and after each operation, and what each returned.
 */
export async function referenceRun(
  openStore: (path: string) => Promise<SweepStore>,
  seed: number,
  program: readonly ProgramOp[],
  start: string,
  under: string,
): Promise<Reference> {
  const dir = Deno.makeTempDirSync({ dir: under, prefix: "reference-" });
  const db = join(dir, "store.db");
  copyDb(start, db);
  const store = await openStore(db);
  try {
    const runner = new ProgramRunner(store, seed);
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
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

function replayCommand(ctx: LegContext, state: PlannedState): string {
  const parts = [`DENO_SQLITE_PATH=${shellQuote(ctx.leg.library)}`, "deno", "task", "sweep"];
  if (ctx.target !== REFERENCE_TARGET) parts.push("--target", shellQuote(ctx.target));
  if (ctx.crashImage?.flag) parts.push(ctx.crashImage.flag);
  parts.push("--legs", ctx.leg.name, "--seed", String(ctx.seed), "--state", shellQuote(state.id));
  return parts.join(" ");
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
  const intents = readAckJournal<{ i: number; op: string }>(intentsPath);
  const acks = readAckJournal<Ack>(acksPath);
  let verdict: Verdict = { candidates: {} };
  let imageDiffers: boolean | undefined;
  let observation: JournalObservation | undefined;
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
      // The mode the child ran in, from the files it left, before anything reopens them.
      observation = observeJournalMode(db, state.id);
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
        verdict = await checkRecovered({
          openStore: ctx.openStore,
          state,
          interrupted,
          acks,
          db: checkedDb,
          reference: () => reference(ctx, state.program, start),
          fail,
        });
      }
    }
  }

  const checkMs = performance.now() - checked;
  const timing = {
    ...(imageDiffers !== undefined ? { imageDiffers } : {}),
    ...(observation ? { observation } : {}),
    childMs,
    checkMs,
  };
  if (!problems.length) {
    Deno.removeSync(dir, { recursive: true });
    return { state, covered, ...(verdict.match ? { match: verdict.match } : {}), ...timing };
  }
  const failure: SweepFailure = {
    state: state.id,
    leg: ctx.leg.name,
    point: state.point,
    k: state.k,
    clause: problems[0]!.clause,
    problems: problems.map((p) => `${p.clause}: ${p.text}`),
    replay: replayCommand(ctx, state),
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
          recovered: verdict.recovered ?? null,
          candidates: verdict.candidates,
          image: ctx.crashImage?.name ?? "the files as the child left them",
          imageDiffers: imageDiffers ?? null,
          journalMode: observation ?? null,
          note: "crashed/ holds the files as the child left them, before recovery" +
            (ctx.crashImage
              ? "; baseline/ the start state, <state>.fs.log beside it the recording, last-sync/ the image checked"
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
  return { state, covered, failure, ...timing };
}
