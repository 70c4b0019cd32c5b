/**
 * The power-loss tier. A SIGKILL keeps the page cache, so it can never show a commit
 * lost to power loss (SQLite: transactions survive an application crash whatever
 * `synchronous` is). Here the writer child runs with the recording VFS
 * (`session_db/recording_vfs.ts`, preloaded as the default VFS), is SIGKILLed, and the
 * crash states a power loss at that instant could have left (`session_db/crash_states.ts`:
 * the last-sync image, the full image, seeded random subsets of unsynced writes, torn
 * writes) are materialised into fresh folders and checked through the target's own store:
 *
 * - durability, of the last-sync image and the full image: every acknowledged operation
 *   is there;
 * - consistency, of every state: it recovers to a valid database (integrity, the store's
 *   invariants, recovery deterministic) holding the cell's clause (a contiguous prefix
 *   for cell 1, whole-or-absent rotations for cell 3, exactly the state of a prefix of
 *   the edit steps for cell 4; for cell 5, after recoverers race on it, each effect at
 *   most once and no obligation silently lost).
 *
 * Cell 5's receiver (the inbox file) is outside the power loss: what the provider got
 * stays got. Its crash-during-resend kill point is not in the tier: the power loss would
 * have to cover the sender's and the armed recoverer's writes in one log.
 *
 * Permissions: the tier's children get an unscoped `--allow-ffi` (callbacks and pointer
 * views need it), the tier's one widening; everything else is scoped as for the other
 * cells. The checking process needs no more than the other cells. The target must reach
 * SQLite through this package's binding (the VFS is registered in that library).
 *
 * @example
 * ```ts ignore
 * import { powerLossCells } from "./power_loss.ts";
 * for (const test of await powerLossCells({ target: new URL("./reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 *
 * @module
 */
import { runSeed, seededRandom } from "../harness/seeded_random.ts";
import { ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { countAcks, readAckJournal } from "../harness/ack_journal.ts";
import { countReady, releaseBarrier } from "../harness/barrier.ts";
import { type Child, classifyExit, killWhileAlive, reapAll, spawnChild } from "../harness/child.ts";
import { integrityCheck } from "../harness/db_audit.ts";
import { effectiveModeOrSkip, type Leg, legEnv } from "../harness/legs.ts";
import { waitFor } from "../harness/wait_for.ts";
import {
  CrashModel,
  type CrashState,
  type FileSet,
  materialise,
  readVfsLog,
  snapshotFolder,
} from "../session_db/crash_states.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { targetAccess } from "./target_access.ts";
import { spawnRecordedChild } from "./recorded_child.ts";
import { effectsPerObligation, readInbox, SENDER_AFTER_SEND } from "./_inbox.ts";
import { recoverMessages } from "./prefix_durability.ts";
import { recoverOutbox } from "./outbox_exactly_once.ts";
import { CELL_METHODS, loadTarget, openTargetStore, type StoredSession } from "./target.ts";

export type { CellOptions } from "./cell_options.ts";
export type { Leg, LegName } from "../harness/legs.ts";
export type { CrashState, FileSet } from "../session_db/crash_states.ts";

/**
 * How the writer dies: the instant an operation is acknowledged, or at a random moment.
 *
 * @example
 * ```ts
 * import { type PowerLossKill, powerLossPrefixCell } from "./power_loss.ts";
 * const kills: PowerLossKill[] = ["ack"]; // only the kill the instant an append is acknowledged
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await powerLossPrefixCell({ target, kills })) Deno.test(test);
 * ```
 */
export type PowerLossKill = "ack" | "random";

/**
 * Options of the power-loss cells and runs.
 *
 * @example
 * ```ts
 * import { powerLossCells, type PowerLossOptions } from "./power_loss.ts";
 * const options: PowerLossOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
 *   subsets: 4,
 *   torn: 2,
 *   seed: 7, // replay a reported run
 * };
 * for (const test of await powerLossCells(options)) Deno.test(test);
 * ```
 */
export interface PowerLossOptions extends CellOptions {
  /** Acknowledged operations before the kill (default 40 appends, 15 rotations). */
  minAcknowledged?: number;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number;
  /** Which kills to run (default both). */
  kills?: readonly PowerLossKill[];
  /** Random subset states per run (default 12). */
  subsets?: number;
  /** Torn states per run (default 6). */
  torn?: number;
  /** The first seed of the random states (default: drawn, and reported). */
  seed?: number;
  /** Extra environment for the writer (e.g. `SESSION_DB_SYNCHRONOUS` for the tool). */
  env?: Record<string, string>;
}

/**
 * The verdict on one crash state.
 *
 * @example
 * ```ts
 * import type { StateVerdict } from "./power_loss.ts";
 * function line(verdict: StateVerdict): string {
 *   const problems = verdict.problems.length ? verdict.problems.join("; ") : "recovered";
 *   return `${verdict.kind} state (seed ${verdict.seed}): ${verdict.lost} lost, ${problems}`;
 * }
 * ```
 */
export interface StateVerdict {
  /** The state's kind. */
  kind: CrashState["kind"];
  /** Its seed (0 for the deterministic ones). */
  seed: number;
  /** Acknowledged operations missing from it. */
  lost: number;
  /** Consistency violations (empty when it recovered to a valid database). */
  problems: string[];
}

/**
 * What one recorded run found.
 *
 * @example
 * ```ts
 * import type { PowerLossRun } from "./power_loss.ts";
 * function held(run: PowerLossRun): boolean {
 *   return run.lastSyncLost === 0 && run.corruptStates === 0 && (run.fidelity ?? null) === null;
 * }
 * ```
 */
export interface PowerLossRun {
  /** The kill. */
  kill: PowerLossKill;
  /** Acknowledged operations. */
  acknowledged: number;
  /** Crash states materialised and checked. */
  statesChecked: number;
  /** Acknowledged operations missing from the last-sync image. */
  lastSyncLost: number;
  /** Acknowledged operations missing from the full image (what a SIGKILL leaves). */
  fullLost: number;
  /** States that did not recover to a valid database. */
  corruptStates: number;
  /** The first violation seen, with its state. */
  firstProblem?: string;
  /**
   * Whether replaying the log reproduces the files on disk: `null` when it does, a
   * description when not; checked after an `ack` kill only (a random kill can land
   * between a write and its record).
   */
  fidelity?: string | null;
  /** The on-disk journal mode after the run. */
  onDisk: string;
  /** Whether the leg was honoured, and why not. */
  honoured: { ok: boolean; reason?: string };
  /** The first seed of the random states. */
  seed: number;
  /** Completed syncs and writes in the log. */
  log: { syncs: number; operations: number; records: number; tornBytes: number };
  /** Where the run's files are. */
  dir: string;
}

/**
 * What a run needs: the leg, the target, a fresh folder.
 *
 * @example
 * ```ts
 * import { currentLeg } from "../harness/legs.ts";
 * import { powerLossPrefixRun, type PowerLossRunOptions } from "./power_loss.ts";
 * const options: PowerLossRunOptions = {
 *   leg: currentLeg(),
 *   target: new URL("./reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "random",
 * };
 * console.log((await powerLossPrefixRun(options)).statesChecked);
 * ```
 */
export interface PowerLossRunOptions extends Omit<PowerLossOptions, "target" | "leg" | "kills"> {
  /** The leg (library, journal mode). */
  leg: Leg;
  /** The target specifier. */
  target: string;
  /** A fresh folder for the run (created). */
  dir: string;
  /** The kill. */
  kill: PowerLossKill;
}

/** Spawns a child of the cells with the recording VFS preloaded (`recorded_child.ts`). */
function spawnRecorded(
  options: PowerLossRunOptions,
  script: string,
  args: string[],
  log: string,
  env: Record<string, string> = {},
): Child {
  const access = targetAccess(options.target);
  return spawnRecordedChild({
    script: new URL(script, import.meta.url),
    args: [options.target, ...args],
    runDir: options.dir,
    library: options.leg.library,
    env: { ...legEnv(options.leg), ...options.env, ...env },
    ...(access.read ? { read: access.read } : {}),
    ...(access.importHosts ? { importHosts: access.importHosts } : {}),
  }, log);
}

function sameFiles(expected: FileSet, actual: FileSet): string | null {
  const names = [...new Set([...expected.keys(), ...actual.keys()])].sort();
  for (const name of names) {
    const a = expected.get(name);
    const b = actual.get(name);
    if (!a || !b) {
      return `${name}: ${a ? "in the replay only" : "on disk only"}`;
    }
    if (a.length !== b.length) return `${name}: replay ${a.length} bytes, disk ${b.length} bytes`;
    const at = a.findIndex((byte, i) => byte !== b[i]);
    if (at !== -1) return `${name}: first difference at byte ${at}`;
  }
  return null;
}

interface Layout {
  db: string;
  dbDir: string;
  acks: string;
  log: string;
}

function layout(dir: string): Layout {
  Deno.mkdirSync(join(dir, "db"), { recursive: true });
  return {
    dbDir: join(dir, "db"),
    db: join(dir, "db", "store.db"),
    acks: join(dir, "acks.jsonl"),
    log: join(dir, "vfs.log"),
  };
}

/** Runs the recorded child until the kill; returns the on-disk audit. */
async function recordAndKill(
  options: PowerLossRunOptions,
  files: Layout,
  script: string,
  args: string[],
  what: string,
  env: Record<string, string> = {},
): Promise<void> {
  const child = spawnRecorded(options, script, args, files.log, env);
  const threshold = options.minAcknowledged!;
  try {
    if (options.kill === "ack") {
      await waitFor(() => child.exited !== undefined, {
        what: `the writer to kill itself at the acknowledgement instant (${what})`,
        deadlineMs: options.deadlineMs ?? 60_000,
        observed: () => `${countAcks(files.acks)} acknowledged`,
      });
      ok(
        classifyExit(child.exited!).kind === "killed",
        `the writer did not die by SIGKILL: ${child.describe()}`,
      );
    } else {
      await waitFor(() => countAcks(files.acks) >= threshold, {
        what: `${threshold} acknowledged ${what}`,
        deadlineMs: options.deadlineMs ?? 60_000,
        children: [child],
        observed: () => `${countAcks(files.acks)} acknowledged`,
      });
      await killWhileAlive(child);
    }
  } finally {
    await reapAll([child]);
  }
}

/** Replays the log, materialises every state, and checks each one. */
async function checkStates<A>(
  options: PowerLossRunOptions,
  files: Layout,
  baseline: FileSet,
  acks: A[],
  check: (db: string, durable: boolean) => Promise<{ lost: number; problems: string[] }>,
): Promise<PowerLossRun> {
  const log = readVfsLog(files.log);
  const model = new CrashModel(baseline, log.records, files.dbDir);
  const seed = options.seed ?? runSeed();
  const fidelity = options.kill === "ack"
    ? sameFiles(model.fullImage(), snapshotFolder(files.dbDir))
    : undefined;
  const audit = effectiveModeOrSkip(files.db, options.leg);
  const verdicts: StateVerdict[] = [];
  const states = model.states({ subsets: options.subsets ?? 12, torn: options.torn ?? 6, seed });
  for (const [index, state] of states.entries()) {
    const dir = join(options.dir, "states", `${index}-${state.kind}-${state.seed}`);
    materialise(state.files, dir);
    const durable = state.kind === "last-sync" || state.kind === "full";
    let verdict: { lost: number; problems: string[] };
    try {
      verdict = await check(join(dir, "store.db"), durable);
    } catch (error) {
      verdict = {
        lost: acks.length,
        problems: [`recovery failed: ${error instanceof Error ? error.message : String(error)}`],
      };
    }
    verdicts.push({ kind: state.kind, seed: state.seed, ...verdict });
    // Keep a state's folder as evidence only when it broke a rule.
    if (verdict.problems.length === 0 && (!durable || verdict.lost === 0)) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
  const bad = verdicts.find((v) => v.problems.length > 0);
  return {
    kill: options.kill,
    acknowledged: acks.length,
    statesChecked: verdicts.length,
    lastSyncLost: verdicts.find((v) => v.kind === "last-sync")!.lost,
    fullLost: verdicts.find((v) => v.kind === "full")!.lost,
    corruptStates: verdicts.filter((v) => v.problems.length > 0).length,
    ...(bad ? { firstProblem: `${bad.kind} state (seed ${bad.seed}): ${bad.problems[0]}` } : {}),
    ...(fidelity !== undefined ? { fidelity } : {}),
    onDisk: audit.onDisk,
    honoured: { ok: audit.honoured, ...(audit.reason ? { reason: audit.reason } : {}) },
    seed,
    log: {
      syncs: model.syncs,
      operations: model.operations,
      records: log.records.length,
      tornBytes: log.tornBytes,
    },
    dir: options.dir,
  };
}

// --- cell 1 -------------------------------------------------------------------------

type Append = { i: number; rowid: number };

/** Checks one recovered state of cell 1: a contiguous prefix; with `durable`, every ack. */
async function checkPrefixState(
  target: string,
  db: string,
  acks: Append[],
): Promise<{ lost: number; problems: string[] }> {
  const first = await recoverMessages(target, db, "cell1");
  const second = await recoverMessages(target, db, "cell1");
  const rows = first.messages;
  const problems: string[] = [];
  const gap = rows.findIndex((row, i) => row.content !== `m${i}`);
  if (gap !== -1) {
    problems.push(`row ${gap} is ${JSON.stringify(rows[gap]?.content)}, expected "m${gap}"`);
  }
  const down = rows.findIndex((row, i) => i > 0 && row.id <= rows[i - 1]!.id);
  if (down !== -1) problems.push(`rowid ${rows[down]?.id} at ${down} does not increase`);
  // An acknowledged append that survived keeps its acknowledged row id.
  const moved = acks.find((ack) => ack.i < rows.length && rows[ack.i]!.id !== ack.rowid);
  if (moved) {
    problems.push(`m${moved.i} has row id ${rows[moved.i]!.id}, acknowledged ${moved.rowid}`);
  }
  if (JSON.stringify(second.messages) !== JSON.stringify(rows)) {
    problems.push("two recovery passes differ");
  }
  const integrity = integrityCheck(db);
  if (integrity !== "ok") problems.push(`integrity_check: ${integrity}`);
  problems.push(...first.invariants.map((p) => `invariant: ${p}`));
  const byId = new Map(rows.map((row) => [row.id, row.content]));
  const lost = acks.filter((ack) => byId.get(ack.rowid) !== `m${ack.i}`).length;
  return { lost, problems };
}

/**
 * One recorded run of cell 1's writer: it appends `m0, m1, …` through the recording VFS
 * and is SIGKILLed (at the acknowledgement instant of a random append past
 * `minAcknowledged`, or at a random moment past it); then every crash state is checked.
 *
 * @param options Leg, target, folder, kill, thresholds, states.
 * @returns The counts: acknowledged, lost from the last-sync image, corrupt states.
 * @example
 * ```ts ignore
 * import { currentLeg } from "../harness/legs.ts";
 * import { powerLossPrefixRun } from "./power_loss.ts";
 * const run = await powerLossPrefixRun({
 *   leg: currentLeg(),
 *   target: new URL("./reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 * });
 * console.log(run.lastSyncLost, run.corruptStates, run.statesChecked);
 * ```
 */
export async function powerLossPrefixRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  // One seed, reported with the run: the kill point and the random states.
  const seed = options.seed ?? runSeed();
  const random = seededRandom(seed);
  const run = { ...options, seed, minAcknowledged: options.minAcknowledged ?? 40 };
  const files = layout(run.dir);
  const baseline = snapshotFolder(files.dbDir);
  const threshold = run.minAcknowledged;
  const selfKill = run.kill === "ack" ? [String(threshold + Math.floor(random() * threshold))] : [];
  await recordAndKill(
    run,
    files,
    "_prefix_writer.ts",
    [files.db, files.acks, ...selfKill],
    "appends",
  );
  const acks = readAckJournal<Append>(files.acks);
  return checkStates(run, files, baseline, acks, (db) => checkPrefixState(run.target, db, acks));
}

// --- cell 3 -------------------------------------------------------------------------

type Rotation = { i: number; parentId: string; childId: string };

async function checkRotationState(
  target: string,
  db: string,
  acks: Rotation[],
): Promise<{ lost: number; problems: string[] }> {
  const read = async () => {
    const store = await openTargetStore(target, db);
    try {
      const sessions = (await store.listSessions!()).map((s: StoredSession) => ({
        id: s.id,
        parentSessionId: s.parentSessionId,
        endedAt: s.endedAt,
        endReason: s.endReason,
      })).sort((a, b) => a.id.localeCompare(b.id));
      const summaries: Record<string, (string | null)[]> = {};
      for (const s of sessions) {
        if (s.parentSessionId) {
          summaries[s.id] = (await store.getMessages(s.id)).map((m) => m.content);
        }
      }
      const invariants = store.checkInvariants ? await store.checkInvariants() : [];
      return { sessions, summaries, invariants };
    } finally {
      await store.close();
    }
  };
  const first = await read();
  const second = await read();
  const problems: string[] = [];
  const byId = new Map(first.sessions.map((s) => [s.id, s]));
  const parents = new Set(first.sessions.map((s) => s.parentSessionId).filter((p) => p));
  const orphans = first.sessions.filter((s) => s.endReason === "compression" && !parents.has(s.id));
  if (orphans.length) problems.push(`compression orphans: ${orphans.map((s) => s.id).join(", ")}`);
  const complete = (i: number) => {
    const parent = byId.get(`parent-${i}`);
    const child = byId.get(`child-${i}`);
    return parent?.endReason === "compression" && child?.parentSessionId === parent.id &&
      first.summaries[child.id]?.join() === `summary ${i}`;
  };
  const indices = first.sessions.map((s) => /^(?:parent|child)-(\d+)$/.exec(s.id)?.[1])
    .filter((i) => i !== undefined).map(Number);
  const highest = indices.length ? Math.max(...indices) : -1;
  let prefixEnded = false;
  for (let i = 0; i <= highest; i++) {
    const parent = byId.get(`parent-${i}`);
    const child = byId.get(`child-${i}`);
    const absent = child === undefined && (parent === undefined || parent.endedAt === null);
    if (!complete(i) && !absent) {
      problems.push(
        `partial rotation ${i}: parent ${JSON.stringify(parent)}, child ${JSON.stringify(child)}`,
      );
    }
    if (!complete(i)) prefixEnded = true;
    else if (prefixEnded) problems.push(`rotation ${i} complete after an incomplete one`);
  }
  if (JSON.stringify(second.sessions) !== JSON.stringify(first.sessions)) {
    problems.push("two recovery passes differ");
  }
  const integrity = integrityCheck(db);
  if (integrity !== "ok") problems.push(`integrity_check: ${integrity}`);
  problems.push(...first.invariants.map((p) => `invariant: ${p}`));
  const lost = acks.filter((ack) => !complete(ack.i)).length;
  return { lost, problems };
}

/**
 * One recorded run of cell 3's rotator: it rotates `parent-i` into `child-i` through the
 * recording VFS and is SIGKILLed (at a random moment past `minAcknowledged` rotations,
 * or by the crash point `publishCompressionChild:afterCommit` right after a commit);
 * then every crash state is checked: no orphan, every rotation whole or absent, the
 * whole ones a prefix, and with durability every acknowledged one whole.
 *
 * @param options Leg, target, folder, kill, thresholds, states.
 * @returns The counts.
 * @example
 * ```ts
 * import { currentLeg } from "../harness/legs.ts";
 * import { powerLossRotationRun } from "./power_loss.ts";
 * const run = await powerLossRotationRun({
 *   leg: currentLeg(),
 *   target: new URL("./reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 * });
 * console.log(run.lastSyncLost, run.corruptStates, run.statesChecked);
 * ```
 */
export async function powerLossRotationRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  const seed = options.seed ?? runSeed();
  const random = seededRandom(seed);
  const run = { ...options, seed, minAcknowledged: options.minAcknowledged ?? 15 };
  const files = layout(run.dir);
  const baseline = snapshotFolder(files.dbDir);
  const threshold = run.minAcknowledged;
  // The "ack" kill dies right after a rotation's COMMIT returned, before it is journaled.
  const env = run.kill === "ack"
    ? {
      SESSION_DB_CRASH_AT: `publishCompressionChild:afterCommit@${
        threshold + Math.floor(random() * threshold)
      }`,
    }
    : {};
  await recordAndKill(run, files, "_rotator.ts", [files.db, files.acks, "0"], "rotations", env);
  const acks = readAckJournal<Rotation>(files.acks);
  return checkStates(run, files, baseline, acks, (db) => checkRotationState(run.target, db, acks));
}

// --- cell 4 -------------------------------------------------------------------------

/** An [id, content] pair; `null` for the id an in-flight append has not got yet. */
type Pair = [number | null, string];

/** A step of cell 4's editor (`_editor.ts`), as journaled. */
interface EditStep {
  s: number;
  op: "append" | "rewind" | "fork";
  /** The active transcript of `main` once the step is applied. */
  expect: Pair[];
  deactivated?: number[];
  branch?: string;
  expectBranch?: string[];
}

interface EditState {
  rows: { id: number; content: string | null; active: boolean }[];
  branches: Record<string, { exists: boolean; contents: (string | null)[]; ids: number[] }>;
  invariants: string[];
}

async function readEdits(target: string, db: string, branches: string[]): Promise<EditState> {
  const store = await openTargetStore(target, db);
  const read = async (session: string, includeInactive: boolean) => {
    try {
      return (await store.getMessages(session, { includeInactive })).map((m) => ({
        id: m.id,
        content: m.content,
        active: m.active !== false,
      }));
    } catch {
      // An unknown session may throw: it holds nothing.
      return [];
    }
  };
  try {
    const rows = await read("main", true);
    const out: EditState["branches"] = {};
    for (const branch of branches) {
      const branchRows = await read(branch, false);
      const exists = store.getSession
        ? (await store.getSession(branch)) !== undefined
        : branchRows.length > 0;
      out[branch] = {
        exists,
        contents: branchRows.map((r) => r.content),
        ids: branchRows.map((r) => r.id),
      };
    }
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { rows, branches: out, invariants };
  } finally {
    await store.close();
  }
}

/** Whether the recovered pairs are the expected ones (a `null` id: a new row's id). */
function sameTranscript(recovered: readonly Pair[], expected: readonly Pair[]): boolean {
  return recovered.length === expected.length &&
    recovered.every(([id, content], i) =>
      content === expected[i]![1] && (expected[i]![0] === null || id === expected[i]![0])
    );
}

/**
 * Why the state is not the one the first `n` steps leave (`null` when it is): the active
 * transcript of `main` is step n-1's, exactly the rows the first n rewinds removed are
 * inactive, the branches forked by the first n steps hold their parent's prefix at fork
 * time, and no later branch exists.
 */
function notAfter(state: EditState, steps: readonly EditStep[], n: number): string | null {
  const active = state.rows.filter((r) => r.active).map((r) => [r.id, r.content] as Pair);
  const expected = n === 0 ? [] : steps[n - 1]!.expect;
  if (!sameTranscript(active, expected)) {
    return `main is ${JSON.stringify(active)}, not ${JSON.stringify(expected)}`;
  }
  const rewound = new Set(
    steps.slice(0, n).flatMap((step) => step.op === "rewind" ? step.deactivated ?? [] : []),
  );
  const inactive = state.rows.filter((r) => !r.active).map((r) => r.id);
  if (inactive.length !== rewound.size || inactive.some((id) => !rewound.has(id))) {
    return `inactive rows ${JSON.stringify(inactive)}, not ${JSON.stringify([...rewound])}`;
  }
  for (const [i, step] of steps.entries()) {
    if (step.op !== "fork") continue;
    const branch = state.branches[step.branch!]!;
    if (i < n) {
      if (!branch.exists || JSON.stringify(branch.contents) !== JSON.stringify(step.expectBranch)) {
        return `branch ${step.branch} holds ${
          JSON.stringify(branch.contents)
        } (exists ${branch.exists}), not ${JSON.stringify(step.expectBranch)}`;
      }
    } else if (branch.exists || branch.contents.length) {
      return `branch ${step.branch} of a later step exists`;
    }
  }
  return null;
}

/**
 * Checks one recovered state of cell 4: it is exactly the state some prefix of the
 * editor's steps leaves (never a mix), no row duplicated, branches disjoint from `main`;
 * `lost` counts the acknowledged steps beyond the longest such prefix.
 */
async function checkEditState(
  target: string,
  db: string,
  acks: EditStep[],
  steps: EditStep[],
  inFlight: number,
): Promise<{ lost: number; problems: string[] }> {
  const forks = steps.filter((s) => s.op === "fork").map((s) => s.branch!);
  const first = await readEdits(target, db, forks);
  const second = await readEdits(target, db, forks);
  const problems: string[] = [];
  if (inFlight > 1) problems.push(`${inFlight} steps in flight at once`);
  const contents = first.rows.map((r) => r.content);
  const dup = contents.find((c, i) => contents.indexOf(c) !== i);
  if (dup !== undefined) problems.push(`"${dup}" is stored twice: a rewind re-inserted the prefix`);
  const ids = new Set(first.rows.map((r) => r.id));
  if (ids.size !== first.rows.length) problems.push("duplicate row ids in main");
  for (const [name, branch] of Object.entries(first.branches)) {
    if (branch.ids.some((id) => ids.has(id))) problems.push(`branch ${name} shares rows with main`);
  }
  let after = -1;
  let why = "";
  for (let n = steps.length; n >= 0 && after === -1; n--) {
    const reason = notAfter(first, steps, n);
    if (reason === null) after = n;
    else if (n === Math.min(acks.length, steps.length)) why = reason;
  }
  if (after === -1) {
    problems.push(
      `the state is no prefix of the ${steps.length} steps (after the acknowledged ones: ${why})`,
    );
  }
  if (JSON.stringify(second) !== JSON.stringify(first)) problems.push("two recovery passes differ");
  const integrity = integrityCheck(db);
  if (integrity !== "ok") problems.push(`integrity_check: ${integrity}`);
  problems.push(...first.invariants.map((p) => `invariant: ${p}`));
  if (after === -1) {
    // No prefix fits (a consistency failure): count as lost only the acknowledged steps
    // whose transcript contents are missing, so durability and consistency stay apart.
    const active = first.rows.filter((r) => r.active).map((r) => r.content);
    for (let n = steps.length; n >= 0 && after === -1; n--) {
      const expected = n === 0 ? [] : steps[n - 1]!.expect.map(([, content]) => content);
      if (JSON.stringify(active) === JSON.stringify(expected)) after = n;
    }
  }
  return { lost: Math.max(0, acks.length - Math.max(after, 0)), problems };
}

/**
 * One recorded run of cell 4's editor: edit/rewind/fork cycles on `main` through the
 * recording VFS, SIGKILLed at a random moment past `minAcknowledged` steps, or (`ack`)
 * right after the COMMIT of a rewind or a fork by its `afterCommit` crash point; then
 * every crash state is checked: exactly the state of some prefix of the steps (the
 * active transcript, the rewound rows inactive, the branches whole or absent), no row
 * duplicated, and with durability every acknowledged step in it.
 *
 * @param options Leg, target, folder, kill, thresholds, states.
 * @returns The counts.
 * @example
 * ```ts
 * import { currentLeg } from "../harness/legs.ts";
 * import { powerLossForkRun } from "./power_loss.ts";
 * const run = await powerLossForkRun({
 *   leg: currentLeg(),
 *   target: new URL("./reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "random",
 * });
 * console.log(run.lastSyncLost, run.corruptStates, run.statesChecked);
 * ```
 */
export async function powerLossForkRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  const run: PowerLossRunOptions & { minAcknowledged: number } = {
    ...options,
    minAcknowledged: options.minAcknowledged ?? 30,
  };
  const files = layout(run.dir);
  const baseline = snapshotFolder(files.dbDir);
  const intents = join(run.dir, "intents.jsonl");
  // One seed, reported with the run: the editor's steps, the kill point and the states.
  run.seed ??= runSeed();
  const seed = String(run.seed);
  // A fork every 7 steps, a rewind about as often: die after the k-th commit of one.
  const point = run.seed % 2 ? "rewindToMessage:afterCommit" : "forkSession:afterCommit";
  const k = Math.max(2, Math.round(run.minAcknowledged / 7)) + (run.seed >> 1) % 3;
  const env = run.kill === "ack" ? { SESSION_DB_CRASH_AT: `${point}@${k}` } : {};
  await recordAndKill(
    run,
    files,
    "_editor.ts",
    [files.db, files.acks, intents, seed],
    "edit steps",
    env,
  );
  const acks = readAckJournal<EditStep>(files.acks);
  const pending = readAckJournal<EditStep>(intents).filter((i) => i.s > (acks.at(-1)?.s ?? -1));
  const steps = [...acks, ...pending.slice(0, 1)];
  return checkStates(
    run,
    files,
    baseline,
    acks,
    (db) => checkEditState(run.target, db, acks, steps, pending.length),
  );
}

// --- cell 5 -------------------------------------------------------------------------

/** The sender's kill points of the power-loss cell 5 (the store's, then the sender's own). */
const OUTBOX_POINTS = [
  "recordObligation:afterCommit",
  "markAttempting:afterCommit",
  SENDER_AFTER_SEND,
] as const;

/**
 * What a power-loss run of cell 5 needs beyond a run's options.
 *
 * @example
 * ```ts
 * import { currentLeg } from "../harness/legs.ts";
 * import { powerLossOutboxRun, type PowerLossOutboxRunOptions } from "./power_loss.ts";
 * const options: PowerLossOutboxRunOptions = {
 *   leg: currentLeg(),
 *   target: new URL("./reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 *   point: "markAttempting:afterCommit", // dies between the fence bump and the send
 * };
 * console.log((await powerLossOutboxRun(options)).corruptStates);
 * ```
 */
export interface PowerLossOutboxRunOptions extends PowerLossRunOptions {
  /** Where the sender dies, at its third obligation (one of the cell's kill points). */
  point: string;
  /** Obligations the sender records (default 5). */
  obligations?: number;
  /** Recoverers racing on each crash state (default 3). */
  recoverers?: number;
}

async function raceRecoverers(
  options: PowerLossOutboxRunOptions,
  dir: string,
  idempotent: boolean,
): Promise<string[]> {
  const access = targetAccess(options.target);
  const count = options.recoverers ?? 3;
  const barrier = join(dir, "go");
  const racers: Child[] = [];
  try {
    for (let i = 0; i < count; i++) {
      racers.push(spawnChild({
        script: new URL("./_recoverer.ts", import.meta.url),
        args: [
          options.target,
          join(dir, "store.db"),
          join(dir, "inbox.jsonl"),
          dir,
          `r${i}`,
          barrier,
          idempotent ? "1" : "0",
        ],
        runDir: dir,
        library: options.leg.library,
        env: { ...legEnv(options.leg) },
        ...(access.read ? { read: access.read } : {}),
        ...(access.importHosts ? { importHosts: access.importHosts } : {}),
      }));
    }
    await waitFor(() => countReady(dir) >= count, {
      what: `${count} recoverers ready`,
      deadlineMs: options.deadlineMs ?? 60_000,
      children: racers,
      observed: () => `${countReady(dir)} ready`,
    });
    releaseBarrier(barrier);
    await waitFor(() => racers.every((r) => r.exited !== undefined), {
      what: "the racing recoverers to finish",
      deadlineMs: options.deadlineMs ?? 60_000,
      observed: () => `${racers.filter((r) => r.exited).length} finished`,
    });
  } finally {
    await reapAll(racers);
  }
  return racers.filter((r) => classifyExit(r.exited!).kind !== "won").map((r) =>
    `recoverer failed: ${r.describe()}`
  );
}

/**
 * Checks one crash state of cell 5, once per transport on its own copy (the state and
 * the inbox the sender left): recoverers race on it, then each effect is observed at
 * most once (exactly once, every obligation delivered, with the idempotent transport),
 * no obligation is silently lost, states valid, recovery deterministic, integrity and
 * invariants. `lost` counts acknowledged recordings absent and acknowledged deliveries
 * not delivered, before recovery.
 */
async function checkOutboxState(
  options: PowerLossOutboxRunOptions,
  db: string,
  inbox: string,
): Promise<{ lost: number; problems: string[] }> {
  // Dying at the third recording leaves three recorded (the third unacknowledged).
  const recording = options.point === "recordObligation:afterCommit";
  const expected = recording ? 3 : options.obligations ?? 5;
  const recorded = recording ? 2 : expected;
  const delivered = recording ? 0 : 2;
  const state = dirname(db);
  const before = await recoverOutbox(options.target, db);
  const byContent = new Map(before.obligations.map((o) => [o.content, o]));
  let lost = 0;
  for (let i = 0; i < recorded; i++) if (!byContent.has(`effect ${i}`)) lost++;
  for (let i = 0; i < delivered; i++) {
    if (byContent.get(`effect ${i}`)?.state !== "delivered") lost++;
  }
  const problems: string[] = [];
  for (const idempotent of [false, true]) {
    const label = idempotent ? "idempotent" : "non-idempotent";
    const dir = join(state, label);
    Deno.mkdirSync(dir);
    for (const entry of Deno.readDirSync(state)) {
      if (entry.isFile) Deno.copyFileSync(join(state, entry.name), join(dir, entry.name));
    }
    Deno.copyFileSync(inbox, join(dir, "inbox.jsonl"));
    problems.push(...(await raceRecoverers(options, dir, idempotent)).map((p) => `${label}: ${p}`));
    const copy = join(dir, "store.db");
    const first = await recoverOutbox(options.target, copy);
    const second = await recoverOutbox(options.target, copy);
    const arrivals = readInbox(join(dir, "inbox.jsonl"));
    const effects = effectsPerObligation(arrivals, idempotent);
    if (first.obligations.length < recorded || first.obligations.length > expected) {
      problems.push(
        `${label}: ${first.obligations.length} obligations, expected ${recorded}..${expected}`,
      );
    }
    const known = new Set(first.obligations.map((o) => o.obligationId));
    const stray = arrivals.find((a) => !known.has(a.obligationId));
    if (stray) {
      problems.push(`${label}: effect of an unrecorded obligation: ${JSON.stringify(stray)}`);
    }
    for (const o of first.obligations) {
      const n = effects.get(o.obligationId) ?? 0;
      if (idempotent ? n !== 1 : n > 1) {
        problems.push(`${label}: ${o.content} observed ${n} time(s)`);
      }
      if (idempotent && o.state !== "delivered") {
        problems.push(`${label}: ${o.content} ended ${o.state}: ${o.lastError}`);
      }
      if (
        o.state === "delivered" ? n < 1 : !((o.state === "unknown" || o.state === "failed") &&
          o.lastError?.trim())
      ) {
        problems.push(`${label}: ${o.content} silently lost: ${o.state}, received ${n} time(s)`);
      }
    }
    if (JSON.stringify(second) !== JSON.stringify(first)) {
      problems.push(`${label}: two recovery passes differ`);
    }
    const integrity = integrityCheck(copy);
    if (integrity !== "ok") problems.push(`${label}: integrity_check: ${integrity}`);
    problems.push(...first.invariants.map((p) => `${label}: invariant: ${p}`));
  }
  return { lost, problems };
}

/**
 * One recorded run of cell 5's sender: it records `obligations` obligations through the
 * recording VFS, then marks each attempting, sends it (to the inbox, the fake transport,
 * outside the database's folder: what the receiver got survives the power loss) and
 * marks it delivered, and dies at `point` at its third obligation. Then on every crash
 * state, for each transport on its own copy, recoverers race `sweepRecoverable` and
 * redeliver, and the state is checked (`checkOutboxState`).
 *
 * @param options Leg, target, folder, the kill point, counts, states.
 * @returns The counts.
 * @example
 * ```ts
 * import { currentLeg } from "../harness/legs.ts";
 * import { powerLossOutboxRun } from "./power_loss.ts";
 * const run = await powerLossOutboxRun({
 *   leg: currentLeg(),
 *   target: new URL("./reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 *   point: "recordObligation:afterCommit",
 * });
 * console.log(run.lastSyncLost, run.corruptStates, run.firstProblem ?? "no problem");
 * ```
 */
export async function powerLossOutboxRun(
  options: PowerLossOutboxRunOptions,
): Promise<PowerLossRun> {
  const run = { ...options, kill: "ack" as const, minAcknowledged: 0 };
  const files = layout(run.dir);
  const baseline = snapshotFolder(files.dbDir);
  const inbox = join(run.dir, "inbox.jsonl");
  await recordAndKill(
    run,
    files,
    "_sender.ts",
    [files.db, inbox, String(run.obligations ?? 5)],
    `obligations (dies at ${run.point}@3)`,
    { SESSION_DB_CRASH_AT: `${run.point}@3` },
  );
  // Acknowledged: two recordings, or every recording and two deliveries.
  const acknowledged = run.point === "recordObligation:afterCommit"
    ? 2
    : (run.obligations ?? 5) + 2;
  Deno.writeFileSync(inbox, new Uint8Array(), { append: true });
  return checkStates(
    run,
    files,
    baseline,
    Array.from({ length: acknowledged }),
    (db) => checkOutboxState(run, db, inbox),
  );
}

// --- the cells ----------------------------------------------------------------------

async function steps(
  ctx: CellRun,
  t: Deno.TestContext,
  what: string,
  run: PowerLossRun,
  label = `${run.kill} kill`,
) {
  ctx.note(label, {
    acknowledged: run.acknowledged,
    statesChecked: run.statesChecked,
    lastSyncLost: run.lastSyncLost,
    fullLost: run.fullLost,
    corruptStates: run.corruptStates,
    seed: run.seed,
    onDisk: run.onDisk,
    log: run.log,
    ...(run.firstProblem ? { firstProblem: run.firstProblem } : {}),
    ...(run.fidelity ? { fidelity: run.fidelity } : {}),
  });
  await t.step(`${label}: leg honoured: on-disk mode ${run.onDisk}`, () => {
    ok(run.honoured.ok, run.honoured.reason);
  });
  if (run.fidelity !== undefined) {
    await t.step(`${label}: the log replays to the files on disk`, () => {
      ok(run.fidelity === null, `the recording differs from the disk: ${run.fidelity}`);
    });
  }
  await t.step(
    `${label}: nothing acknowledged lost in the last-sync image: ${run.acknowledged} acknowledged ${what}`,
    () => {
      ok(
        run.lastSyncLost === 0,
        `${run.lastSyncLost} of ${run.acknowledged} acknowledged ${what} missing after a power loss (states kept in ${run.dir})`,
      );
      ok(run.fullLost === 0, `${run.fullLost} acknowledged ${what} missing after a SIGKILL`);
    },
  );
  await t.step(
    `${label}: every crash state recovers consistent: ${run.statesChecked} states`,
    () => {
      ok(
        run.corruptStates === 0,
        `${run.corruptStates} of ${run.statesChecked} states inconsistent, first: ${run.firstProblem} (seed ${run.seed}; states kept in ${run.dir})`,
      );
    },
  );
}

/**
 * Cell 1 in the power-loss tier: the prefix writer runs through the recording VFS and
 * is SIGKILLed at the acknowledgement instant and at a random moment. Every
 * acknowledged append must be in the last-sync image (durability); every crash state
 * must recover to the contiguous prefix `m0..m(N-1)` with acknowledged row ids,
 * deterministic recovery, `integrity_check` ok and the invariants (consistency). After
 * the acknowledgement-instant kill, replaying the log must give the files on disk
 * exactly (the recorder missed nothing).
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossPrefixCell } from "./power_loss.ts";
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await powerLossPrefixCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossPrefixCell(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 1,
    title: "power-loss prefix durability",
    legs: "all",
    requires: CELL_METHODS[1],
    async run(ctx, t) {
      for (const kill of options.kills ?? ["ack", "random"]) {
        const run = await powerLossPrefixRun({
          ...options,
          leg: ctx.leg,
          target: ctx.target,
          dir: ctx.run.file(kill),
          kill,
        });
        await steps(ctx, t, "appends", run);
      }
    },
  }, options);
}

/**
 * Cell 3 in the power-loss tier: the rotator runs through the recording VFS and is
 * SIGKILLed at a random moment and right after a rotation's COMMIT. Every acknowledged
 * rotation must be whole in the last-sync image; in every crash state each rotation is
 * whole or absent (never a parent ended by compression without its child), the whole
 * ones a prefix, recovery deterministic, integrity and invariants hold.
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossRotationCell } from "./power_loss.ts";
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await powerLossRotationCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossRotationCell(
  options: PowerLossOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 3,
    title: "power-loss rotation atomicity",
    legs: "all",
    requires: CELL_METHODS[3],
    async run(ctx, t) {
      const points = (await loadTarget(ctx.target)).crashPoints?.() ?? [];
      for (const kill of options.kills ?? ["random", "ack"]) {
        if (kill === "ack" && !points.includes("publishCompressionChild:afterCommit")) continue;
        const run = await powerLossRotationRun({
          ...options,
          leg: ctx.leg,
          target: ctx.target,
          dir: ctx.run.file(kill),
          kill,
        });
        await steps(ctx, t, "rotations", run);
      }
    },
  }, options);
}

/**
 * Cell 4 in the power-loss tier: the editor (edit/rewind/fork cycles) runs through the
 * recording VFS and is SIGKILLed at a random moment and right after a rewind's or a
 * fork's COMMIT. Every acknowledged step must be in the last-sync image; every crash
 * state must be exactly what some prefix of the steps leaves (the active transcript,
 * the rewound rows inactive and no other, each branch whole or absent, never a mix), no
 * row duplicated, recovery deterministic, integrity and invariants.
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossForkCell } from "./power_loss.ts";
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await powerLossForkCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossForkCell(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 4,
    title: "power-loss fork determinism",
    legs: "all",
    requires: CELL_METHODS[4],
    async run(ctx, t) {
      const points = (await loadTarget(ctx.target)).crashPoints?.() ?? [];
      const committed = ["rewindToMessage:afterCommit", "forkSession:afterCommit"];
      for (const kill of options.kills ?? ["random", "ack"]) {
        if (kill === "ack" && !committed.every((p) => points.includes(p))) continue;
        const run = await powerLossForkRun({
          ...options,
          leg: ctx.leg,
          target: ctx.target,
          dir: ctx.run.file(kill),
          kill,
        });
        await steps(ctx, t, "edit steps", run);
      }
    },
  }, options);
}

/**
 * Cell 5 in the power-loss tier: the sender runs through the recording VFS and dies at
 * its third obligation at each kill point (recorded-unsent, attempting-unsent,
 * sent-unacked; the store's points when the target lists them). On every crash state,
 * for each transport on its own copy, recoverers race `sweepRecoverable` and redeliver:
 * every acknowledged recording and delivery must be in the last-sync image; in every
 * state each effect is observed at most once (exactly once with the idempotent
 * transport), no obligation is silently lost, recovery deterministic, integrity and
 * invariants. The receiver's inbox is outside the power loss (the provider got it).
 *
 * @param options Target, leg, states, obligation and recoverer counts.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossOutboxCell } from "./power_loss.ts";
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await powerLossOutboxCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossOutboxCell(
  options: PowerLossOptions & { obligations?: number; recoverers?: number },
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 5,
    title: "power-loss delivery outbox exactly-once",
    legs: "all",
    requires: CELL_METHODS[5],
    async run(ctx, t) {
      const listed = (await loadTarget(ctx.target)).crashPoints?.() ?? [];
      for (const point of OUTBOX_POINTS) {
        if (point !== SENDER_AFTER_SEND && !listed.includes(point)) continue;
        const run = await powerLossOutboxRun({
          ...options,
          leg: ctx.leg,
          target: ctx.target,
          dir: ctx.run.file(point.replace(/\W/g, "_")),
          kill: "ack",
          point,
        });
        await steps(ctx, t, "operations", run, point);
      }
    },
  }, options);
}

/**
 * The power-loss tier's cells (1, 3, 4 and 5) for one target on the current leg.
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossCells } from "./power_loss.ts";
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await powerLossCells({ target })) Deno.test(test);
 * ```
 */
export async function powerLossCells(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return [
    ...await powerLossPrefixCell(options),
    ...await powerLossRotationCell(options),
    ...await powerLossForkCell(options),
    ...await powerLossOutboxCell(options),
  ];
}
