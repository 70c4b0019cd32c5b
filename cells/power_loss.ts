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
 *   for cell 1, whole-or-absent rotations for cell 3).
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
import { ok } from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { countAcks, readAckJournal } from "../harness/ack_journal.ts";
import {
  Child,
  CHILD_ENV,
  classifyExit,
  killWhileAlive,
  packageRoot,
  reapAll,
} from "../harness/child.ts";
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
import { type CellOptions, type CellRun, defineCell, targetAccess } from "./_cell.ts";
import { recoverMessages } from "./prefix_durability.ts";
import { loadTarget, openTargetStore, type StoredSession } from "./target.ts";

export type { CellOptions } from "./_cell.ts";
export type { Leg, LegName } from "../harness/legs.ts";
export type { CrashState, FileSet } from "../session_db/crash_states.ts";

/** How the writer dies: the instant an operation is acknowledged, or at a random moment. */
export type PowerLossKill = "ack" | "random";

/** Options of the power-loss cells and runs. */
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

/** The verdict on one crash state. */
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

/** What one recorded run found. */
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

/** What a run needs: the leg, the target, a fresh folder. */
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

/**
 * Spawns a child of the cells with the recording VFS preloaded: like `spawnChild`, but
 * with an unscoped `--allow-ffi` and `SESSION_DB_VFS_LOG`.
 */
function spawnRecorded(
  options: PowerLossRunOptions,
  script: string,
  args: string[],
  log: string,
  env: Record<string, string> = {},
): Child {
  const scriptUrl = new URL(script, import.meta.url).href;
  const preload = new URL("./_power_loss_preload.ts", import.meta.url).href;
  const access = targetAccess(options.target);
  const read = [options.dir, ...(access.read ?? [])];
  const root = packageRoot();
  if (root) read.push(root);
  if (scriptUrl.startsWith("file:")) read.push(dirname(fileURLToPath(scriptUrl)));
  const childEnv: Record<string, string> = {
    DENO_SQLITE_PATH: options.leg.library,
    NO_COLOR: "1",
    ...legEnv(options.leg),
    SESSION_DB_VFS: "recording",
    SESSION_DB_VFS_LOG: log,
    ...options.env,
    ...env,
  };
  const allowEnv = [...new Set([...CHILD_ENV, ...Object.keys(childEnv)])];
  for (const name of ["DENO_DIR", "HOME", "PATH"]) {
    const value = Deno.env.get(name);
    if (value !== undefined && childEnv[name] === undefined) childEnv[name] = value;
  }
  const imports = [...(access.importHosts ?? [])];
  const flags = [
    "run",
    "--no-config",
    "--no-lock",
    "--no-prompt",
    `--allow-read=${[...new Set(read)].join(",")}`,
    `--allow-write=${options.dir}`,
    // The tier's one widening: UnsafeCallback and pointer views need an unscoped FFI.
    "--allow-ffi",
    `--allow-env=${allowEnv.join(",")}`,
    `--preload=${preload}`,
  ];
  if (imports.length) flags.push(`--allow-import=${imports.join(",")}`);
  const all = [...flags, scriptUrl, options.target, ...args];
  const process = new Deno.Command(Deno.execPath(), {
    args: all,
    cwd: options.dir,
    clearEnv: true,
    env: childEnv,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return new Child(process, [Deno.execPath(), ...all], 64 * 1024);
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
  const seed = options.seed ?? 1 + Math.floor(Math.random() * 1e6);
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
  const run = { ...options, minAcknowledged: options.minAcknowledged ?? 40 };
  const files = layout(run.dir);
  const baseline = snapshotFolder(files.dbDir);
  const threshold = run.minAcknowledged;
  const selfKill = run.kill === "ack"
    ? [String(threshold + Math.floor(Math.random() * threshold))]
    : [];
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
 */
export async function powerLossRotationRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  const run = { ...options, minAcknowledged: options.minAcknowledged ?? 15 };
  const files = layout(run.dir);
  const baseline = snapshotFolder(files.dbDir);
  const threshold = run.minAcknowledged;
  // The "ack" kill dies right after a rotation's COMMIT returned, before it is journaled.
  const env = run.kill === "ack"
    ? {
      SESSION_DB_CRASH_AT: `publishCompressionChild:afterCommit@${
        threshold + Math.floor(Math.random() * threshold)
      }`,
    }
    : {};
  await recordAndKill(run, files, "_rotator.ts", [files.db, files.acks, "0"], "rotations", env);
  const acks = readAckJournal<Rotation>(files.acks);
  return checkStates(run, files, baseline, acks, (db) => checkRotationState(run.target, db, acks));
}

// --- the cells ----------------------------------------------------------------------

async function steps(ctx: CellRun, t: Deno.TestContext, what: string, run: PowerLossRun) {
  const label = `${run.kill} kill`;
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
    requires: ["createSession", "appendMessage", "getMessages", "close"],
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
    requires: [
      "createSession",
      "appendMessage",
      "getMessages",
      "listSessions",
      "tryAcquireCompressionLock",
      "publishCompressionChild",
      "releaseCompressionLock",
      "close",
    ],
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
 * The power-loss tier's cells (1 and 3) for one target on the current leg.
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
  return [...await powerLossPrefixCell(options), ...await powerLossRotationCell(options)];
}
