import { deepStrictEqual, ok } from "node:assert/strict";
import { readAckJournal } from "../../harness/ack_journal.ts";
import type { Child } from "../../harness/child.ts";
import { besideStore } from "../../harness/evidence.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { type EditJudgement, type EditStep, judgeEdits } from "./judge.ts";
import { resumedStep } from "../moves/resume.ts";
import {
  crashAtPoint,
  killAfterAcks,
  killAfterLastWrite,
  killReadyAndObserve,
} from "../moves/kill.ts";
import { shownValue as shown } from "../contract/typed.ts";
import { killSeries, seriesKind } from "../moves/kill_series.ts";
import { raceSeries, raceSeriesOf } from "../moves/race.ts";
import { stopSeries } from "../moves/guarded_stops.ts";
import { checkSteps } from "../engine/state_check.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { loadTarget, openTargetStore, type StoredMessage } from "../contract/target.ts";
import { EDITOR } from "./_children.ts";
import { longFork } from "./long_fork.ts";

/** Steps a resumed editor takes: a fork falls on every seventh step. */
const RESUMED_STEPS = 7;

/**
 * Options of {@linkcode forkDeterminismCell}.
 *
 * @example
 * ```ts
 * import { forkDeterminismCell, type ForkDeterminismOptions } from "./cell.ts";
 * const options: ForkDeterminismOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   seed: 42, // replay a reported run
 *   crashPoints: false,
 * };
 * for (const test of await forkDeterminismCell(options)) Deno.test(test);
 * ```
 */
export interface ForkDeterminismOptions extends CellOptions {
  /** Acknowledged steps to wait for before the random kill (default 30). */
  minAcknowledged?: number;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number;
  /** Also crash at every `rewindToMessage:*` and `forkSession:*` point the target lists (default true). */
  crashPoints?: boolean;
}

/** What cell 4's phases share: the run, its steps and the options. */
interface ForkRun {
  ctx: CellRun;
  t: Deno.TestContext;
  options: ForkDeterminismOptions;
}

/** An editor's files: its database and its journals of acknowledged steps and intents. */
interface EditorFiles {
  db: string;
  acksPath: string;
  intentsPath: string;
}

/** The files of an editor in `dir` (`db/store.db`: the store's folder is its own). */
function editorIn(dir: string): EditorFiles {
  return {
    db: `${dir}/db/store.db`,
    acksPath: `${dir}/acks.jsonl`,
    intentsPath: `${dir}/intents.jsonl`,
  };
}

/** Judges a killed editor's file against its journals; notes and counts what it found. */
async function checkRun(
  cell: Pick<ForkRun, "ctx" | "t">,
  label: string,
  files: EditorFiles,
): Promise<EditJudgement> {
  const { ctx, t } = cell;
  const { db, acksPath, intentsPath } = files;
  const acks = readAckJournal<EditStep>(acksPath);
  const judged = await judgeEdits(ctx.target, db, {
    acks,
    intents: readAckJournal<EditStep>(intentsPath),
  });
  const inflight = judged.inflight;
  ctx.note(label, {
    acknowledged: acks.length,
    rewinds: acks.filter((a) => a.op === "rewind").length,
    forks: acks.filter((a) => a.op === "fork").length,
    inflight: inflight ? `${inflight.op} ${inflight.s}` : null,
    rows: judged.state.rows.length,
  });
  tally(ctx, "acknowledgedOps", acks.length);
  tally(ctx, "lost", judged.lost);
  await checkSteps(t, judged.checks, `${label}: `);
  return judged;
}

/**
 * Resume after recovery: a fresh editor continues `main` on the recovered file (rewinds,
 * forks and turns, numbered after every step journaled) and kills itself right after its
 * seventh acknowledged step (seven steps in a row hold a fork); the file is judged again against both lives' steps (the first
 * life's step in flight counted when the state showed it applied).
 */
async function resumeRun(
  cell: Pick<ForkRun, "ctx" | "t">,
  label: string,
  state: EditorFiles & { judged: EditJudgement },
): Promise<void> {
  const { ctx, t } = cell;
  const { db, acksPath, intentsPath, judged } = state;
  const what = `${label}, resumed`;
  const acks = readAckJournal<EditStep>(acksPath);
  if (judged.applied < acks.length) {
    ctx.note(`${what}`, "not resumed: the recovered state already failed its checks");
    return;
  }
  const intents = readAckJournal<EditStep>(intentsPath);
  const base = judged.applied > acks.length && judged.inflight ? [...acks, judged.inflight] : acks;
  const start = Math.max(-1, ...intents.map((i) => i.s), ...acks.map((a) => a.s)) + 1;
  const resumed = { acks: `${acksPath}.resumed.jsonl`, intents: `${intentsPath}.resumed.jsonl` };
  const args = [
    db,
    resumed.acks,
    resumed.intents,
    String(ctx.seed),
    "-",
    String(start),
    String(RESUMED_STEPS),
  ];
  if (!await resumedStep(ctx, t, { ops: "steps", script: EDITOR, args, db, label })) return;
  const later = readAckJournal<EditStep>(resumed.acks);
  const again = await judgeEdits(ctx.target, db, {
    acks: [...base, ...later],
    intents: readAckJournal<EditStep>(resumed.intents),
  });
  tally(ctx, "acknowledgedOps", later.length);
  tally(ctx, "lost", again.lost);
  await checkSteps(t, again.checks, `${what}: `);
}

/**
 * The rewind's compare-and-swap: a rewind computed from a transcript that changed since
 * (another process appended) is refused with `RewindConflictError` and changes nothing;
 * the same rewind with the current active ids goes through.
 */
async function checkCompareAndSwap(ctx: CellRun, t: Deno.TestContext, db: string) {
  const session = "cas";
  const store = await openTargetStore(ctx.target, db);
  let refused = "accepted";
  let before: StoredMessage[] = [];
  let after: StoredMessage[] = [];
  let rewound: number | string | undefined;
  let again: number | string | undefined;
  try {
    await store.createSession(session);
    for (const [role, content] of [["user", "u0"], ["assistant", "a1"], ["user", "u2"]] as const) {
      await store.appendMessage(session, { role, content });
    }
    const seen = (await store.getMessages(session)).map((m) => m.id);
    // Another process appends after the caller read the transcript it computes the rewind
    // from (a store may be open once per process, as an LMDB environment is).
    const [appended] = await killAfterLastWrite(ctx, db, {
      writes: [{ method: "appendMessage", session }],
    });
    if (appended === null || typeof appended === "object") {
      throw new Error(`Another process's append to "${session}" was refused: ${shown(appended)}`);
    }
    before = await store.getMessages(session, { includeInactive: true });
    try {
      await store.rewindToMessage!(session, seen[2]!, { expectedActiveIds: seen });
    } catch (error) {
      refused = error instanceof Error ? error.name : String(error);
    }
    after = await store.getMessages(session, { includeInactive: true });
    const current = after.filter((m) => m.active !== false).map((m) => m.id);
    try {
      rewound = await store.rewindToMessage!(session, seen[2]!, { expectedActiveIds: current });
    } catch (error) {
      rewound = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    // A rewind over rows an earlier rewind removed counts only the rows it removes.
    await store.appendMessage(session, { role: "user", content: "u4" });
    const live = (await store.getMessages(session)).map((m) => m.id);
    try {
      again = await store.rewindToMessage!(session, seen[0]!, { expectedActiveIds: live });
    } catch (error) {
      again = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
  } finally {
    await store.close();
  }
  ctx.note("compareAndSwap", { staleRewind: refused, currentRewind: rewound, overRewound: again });
  await t.step(
    "compare-and-swap: a rewind with stale active ids is refused with RewindConflictError and changes nothing",
    () => {
      ok(
        refused === "RewindConflictError",
        `the rewind with stale active ids was not refused with RewindConflictError (${refused})`,
      );
      deepStrictEqual(after, before, "the refused rewind changed the transcript");
      ok(
        rewound === 2,
        `the rewind with the current active ids returned ${rewound}, expected 2 rows deactivated`,
      );
      ok(
        again === 3,
        `a rewind to the first message over two rows already rewound returned ${again}, expected 3 rows deactivated (u0, a1, u4)`,
      );
    },
  );
}

/**
 * Cell 4, fork determinism on edit/rewind: recovery yields exactly the chosen prefix
 * after a rewind or a fork. A child runs edit/rewind/fork cycles on one session:
 * user and assistant turns, a rewind to an earlier user message (compare-and-swap on
 * the active ids) followed by the edited turn, and a fork at a chosen message. Before
 * each step it journals an intent with the transcript the step yields, after it the
 * acknowledged step with that transcript (ids and contents) or, for a fork, the branch
 * and its expected contents. It is SIGKILLed at a random moment after at least 30
 * acknowledged steps, then once more at every `rewindToMessage:*` and `forkSession:*`
 * crash point the target lists (the second of its kind, so one was acknowledged).
 * Each time: the active transcript is the last acknowledged one or it with the in-flight
 * step wholly applied, never a mix; no prefix row duplicated (contents and ids unique
 * across all rows, inactive included); every row an acknowledged rewind removed stays
 * inactive and no other row is inactive; every acknowledged branch equals its parent's
 * prefix at fork time, an in-flight one is complete or absent; recovery deterministic,
 * invariants hold. And on a fresh file, the compare-and-swap: a rewind computed from a
 * transcript another process has appended to since is refused with `RewindConflictError`
 * and changes nothing, while the same rewind with the current ids goes through. Two more
 * editors stop right after their first acknowledged fork, and rewind, and are killed
 * there with no write and no close after it: that step must be durable. Every leg.
 *
 * @param options Target, leg, thresholds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { forkDeterminismCell } from "./cell.ts";
 * for (const test of await forkDeterminismCell({ target: new URL("../reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function forkDeterminismCell(
  options: ForkDeterminismOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 4,
    requiresOneOf: [["getSession", "listSessions"]],
    preloads: true,
    run: (ctx, t) => forkRun({ ctx, t, options }),
  }, options);
}

/**
 * Cell 4's phases: the random kill (beside it, editors stopped after their first fork and
 * rewind, then killed), the compare-and-swap, the long fork, the kill series inside a fork
 * and a rewind, the lock races and stops, and the crash points.
 */
async function forkRun(cell: ForkRun): Promise<void> {
  const { ctx, t, options } = cell;
  startTallies(ctx);
  // A random moment after the threshold: up to 20 more acknowledged steps.
  const killAt = (options.minAcknowledged ?? 30) + Math.floor(ctx.random() * 21);
  // Started first, they run beside the random kill's editor (independent files).
  const lastSteps = startLastSteps(ctx);
  await randomKill(cell, killAt);
  await killLastSteps(cell, lastSteps);
  await checkCompareAndSwap(ctx, t, ctx.run.store("cas"));
  await longFork(ctx, t);
  const points = ((await loadTarget(ctx.target)).crashPoints?.() ?? [])
    .filter((p) => p.startsWith("rewindToMessage:") || p.startsWith("forkSession:"));
  await editSeries(cell, points);
  await lockRaces(cell, points);
  if (options.crashPoints === false) return;
  await crashPointKills(cell, points);
}

/** An editor that stops right after its first acknowledged step of `op` and waits there. */
interface LastStep {
  op: "fork" | "rewind";
  dir: string;
  child: Child;
}

/** Spawns the editors that stop after their first fork, and rewind. */
function startLastSteps(ctx: CellRun): LastStep[] {
  return (["fork", "rewind"] as const).map((op) => {
    const dir = ctx.run.file(`last-${op}`);
    Deno.mkdirSync(`${dir}/db`, { recursive: true });
    const files = editorIn(dir);
    const child = ctx.spawn(EDITOR, [
      files.db,
      files.acksPath,
      files.intentsPath,
      String(ctx.seed),
      op,
    ]);
    return { op, dir, child };
  });
}

/** The editor SIGKILLed at a random moment after `killAt` acknowledged steps, judged, resumed. */
async function randomKill(cell: ForkRun, killAt: number): Promise<void> {
  const { ctx, options } = cell;
  const files = {
    db: ctx.run.store("store"),
    acksPath: ctx.run.file("acks.jsonl"),
    intentsPath: ctx.run.file("intents.jsonl"),
  };
  const child = ctx.spawn(EDITOR, [files.db, files.acksPath, files.intentsPath, String(ctx.seed)]);
  await killAfterAcks(ctx, child, {
    db: files.db,
    acksPath: files.acksPath,
    count: killAt,
    what: "edit steps",
    deadlineMs: options.deadlineMs,
  });
  const random = await checkRun(cell, "random kill", files);
  await resumeRun(cell, "random kill", { ...files, judged: random });
}

/**
 * The editors stopped right after their first acknowledged fork (or rewind) was journaled,
 * killed there with no write after it: that step must be durable.
 */
async function killLastSteps(cell: ForkRun, lastSteps: readonly LastStep[]): Promise<void> {
  const { ctx, t } = cell;
  for (const { op, dir, child } of lastSteps) {
    const files = editorIn(dir);
    await killReadyAndObserve(ctx, child, {
      ready: `${files.acksPath}.ready`,
      what: `the editor to stop after its first ${op}`,
      db: files.db,
      at: `killed after the first acknowledged ${op}`,
    });
    const label = `killed right after an acknowledged ${op}`;
    await t.step(`${label}: it was the last step journaled`, () => {
      const last = readAckJournal<EditStep>(files.acksPath).at(-1);
      ok(last?.op === op, `the last acknowledged step is ${JSON.stringify(last)}`);
    });
    await checkRun(cell, label, files);
  }
}

/**
 * Inside an operation with no declared crash point: a kill at each of its calls, each
 * state judged and resumed. The editor's first bracketed operation is a fork (step 4), its
 * second a rewind.
 */
async function editSeries(cell: ForkRun, points: readonly string[]): Promise<void> {
  const { ctx, t, options } = cell;
  const kind = seriesKind(options.killSeries);
  for (const [op, occurrence] of [["forkSession", 1], ["rewindToMessage", 2]] as const) {
    if (kind === "off" || points.some((p) => p.startsWith(`${op}:`))) continue;
    await killSeries(ctx, t, {
      op,
      occurrence,
      script: EDITOR,
      args: (db, dir) => [db, `${dir}/acks.jsonl`, `${dir}/intents.jsonl`, String(ctx.seed)],
      async check(db, dir, label) {
        await checkRun(cell, label, { ...editorIn(dir), db });
      },
      async resume(db, dir, label) {
        const files = { ...editorIn(dir), db };
        // Read without steps: the state was judged (and its steps registered) just before.
        const judged = await judgeEdits(ctx.target, db, {
          acks: readAckJournal<EditStep>(files.acksPath),
          intents: readAckJournal<EditStep>(files.intentsPath),
        });
        await resumeRun(cell, label, { ...files, judged });
      },
      kind,
    });
  }
}

/**
 * With the race series on: a writer racing the rewind at each of its lock calls (a split
 * after the checks; where the target declares no crash point in it), and an append (a
 * fork) stopped at each of its lock calls while the session is rotated (rewound) by
 * another process.
 */
async function lockRaces(cell: ForkRun, points: readonly string[]): Promise<void> {
  const { ctx, t, options } = cell;
  if (
    raceSeriesOf(options.raceSeries) === "locks" &&
    !points.some((p) => p.startsWith("rewindToMessage:"))
  ) {
    await raceSeries(ctx, t, "rewindToMessage");
  }
  if (raceSeriesOf(options.raceSeries) === "locks") await stopSeries(ctx, t, ["fork"]);
}

/**
 * A fresh editor at each `rewindToMessage:*` and `forkSession:*` point the target lists,
 * dying there in the second step of its kind (one acknowledged); each file judged and
 * resumed.
 */
async function crashPointKills(cell: ForkRun, points: readonly string[]): Promise<void> {
  const { ctx, t } = cell;
  ctx.note("crashPoints", points);
  for (const point of points) {
    const op = point.startsWith("rewind") ? "rewind" : "fork";
    const intentsOf = (db: string) => besideStore(db, "intents.jsonl");
    // @2: one step of the kind is acknowledged, the second dies at the point.
    const crashed = await crashAtPoint({ ctx, t }, {
      point,
      nth: 2,
      script: EDITOR,
      args: ({ db, acksPath }) => [db, acksPath, intentsOf(db), String(ctx.seed)],
      check: ({ db, acksPath }) => inflightAt(op, { acksPath, intentsPath: intentsOf(db) }),
    });
    const files = { ...crashed, intentsPath: intentsOf(crashed.db) };
    const judged = await checkRun(cell, point, files);
    await resumeRun(cell, point, { ...files, judged });
  }
}

/** Asserts one step of `op` acknowledged before the crash, and a step of `op` in flight. */
function inflightAt(op: "rewind" | "fork", files: { acksPath: string; intentsPath: string }) {
  const acks = readAckJournal<EditStep>(files.acksPath);
  const inflight = readAckJournal<EditStep>(files.intentsPath).at(-1);
  ok(
    acks.filter((a) => a.op === op).length === 1,
    `expected one acknowledged ${op} before the crash`,
  );
  ok(
    inflight?.op === op && inflight.s > (acks.at(-1)?.s ?? -1),
    `the step in flight is ${JSON.stringify(inflight)}, not a ${op}`,
  );
}
