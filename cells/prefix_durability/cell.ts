import { ok } from "node:assert/strict";
import { countAcks, readAckJournal } from "../../harness/ack_journal.ts";
import { classifyExit, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { acknowledgedOf, type Append, judgePrefix, type PrefixJudgement } from "./judge.ts";
import { checkSteps } from "../engine/state_check.ts";
import { diagnosed } from "../engine/diagnoses.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { killAfterLastWrite, killLanding } from "../moves/kill.ts";
import { killSeries, seriesKind } from "../moves/kill_series.ts";
import { repeatBeside, repeatedStep } from "../moves/repeated.ts";
import { RESUMED_OPS, resumedStep } from "../moves/resume.ts";
import { loadTarget, openTargetStore } from "../contract/target.ts";
import { PREFIX_WRITER } from "./_children.ts";

export { recoverMessages } from "./judge.ts";

/**
 * Options of {@linkcode prefixDurabilityCell}.
 *
 * @example
 * ```ts
 * import { prefixDurabilityCell, type PrefixDurabilityOptions } from "./cell.ts";
 * const options: PrefixDurabilityOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   minAcknowledged: 500,
 *   rounds: 5,
 * };
 * for (const test of await prefixDurabilityCell(options)) Deno.test(test);
 * ```
 */
export interface PrefixDurabilityOptions extends CellOptions {
  /** Acknowledged appends to wait for before the kill (default 200). */
  minAcknowledged?: number;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number;
  /**
   * Kill rounds on the same database, each resuming the writer (default 3): odd rounds
   * kill at a random moment, even rounds the instant an append is acknowledged.
   */
  rounds?: number;
}

/**
 * Cell 1, prefix durability: acknowledged appends survive a hard crash. A child
 * appends `m0, m1, …` and journals each acknowledged `{ i, rowid }`; after at least
 * 200 it is SIGKILLed while alive. The recovered messages must contain every
 * acknowledged append and be exactly `m0..m(N-1)` with N >= acknowledged (no gap,
 * duplicate or reorder), rowids strictly increasing, two recovery passes identical,
 * `integrity_check` ok and the store's invariants empty. Beside the first round, a child
 * creates a session (on a file of its own) and is SIGKILLed the instant the store
 * acknowledged it, nothing written after: the session must be there. Every leg.
 *
 * @param options Target, leg, thresholds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { prefixDurabilityCell } from "./cell.ts";
 * for (const test of await prefixDurabilityCell({ target: new URL("../reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function prefixDurabilityCell(
  options: PrefixDurabilityOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 1,
    // The kill series inside an append loads the recorder (LD_PRELOAD).
    preloads: true,
    run: (ctx, t) => prefixRun({ ctx, t, options }),
  }, options);
}

/** What cell 1's phases share: the run, its steps, the options and the writer's files. */
interface PrefixRun {
  ctx: CellRun;
  t: Deno.TestContext;
  options: PrefixDurabilityOptions;
  db: string;
  acksPath: string;
}

/** The session a child creates beside round 1, on a file of its own, then killed. */
interface Creation {
  db: string;
  id: string;
  /** How the store shows it lacks the session (`null`: it has it), once settled. */
  outcome: Promise<string | null>;
}

/**
 * Cell 1's phases: a session created, and the same turn appended twice, each killed beside
 * the kill rounds; the rounds, the last round's state judged and resumed, the kill series
 * inside an append, and the verdicts on what the two children beside left.
 */
async function prefixRun(
  run: Pick<PrefixRun, "ctx" | "t" | "options">,
): Promise<void> {
  const { ctx, t } = run;
  startTallies(ctx);
  const cell: PrefixRun = {
    ...run,
    db: ctx.run.store("store"),
    acksPath: ctx.run.file("acks.jsonl"),
  };
  const creation = createBeside(ctx);
  const repeated = repeatBeside(ctx, "appends");
  const judged = await killRounds(cell);
  const [createdOutcome] = await Promise.allSettled([creation.outcome]);
  tally(ctx, "lost", createdOutcome.status === "fulfilled" && createdOutcome.value ? 1 : 0);
  await checkSteps(t, judged.checks);
  // The last round's state is continued too (the earlier ones were, by the next round).
  if (judged.lost === 0) await resumePrefix(cell, cell, "last round");
  await appendSeries(cell);
  await creationStep(t, creation, createdOutcome);
  await repeatedStep(t, "appends", repeated);
}

/**
 * A session's creation is acknowledged too: beside round 1, a child creates one on a file
 * of its own and is killed with nothing written after it.
 */
function createBeside(ctx: CellRun): Creation {
  const created = { db: ctx.run.store("created"), id: "cell1-created" };
  const outcome = killAfterLastWrite(ctx, created.db, {
    writes: [{ method: "createSession", session: created.id }],
  })
    .then(() => sessionMissing(ctx.target, created.db, created.id));
  outcome.catch(() => {}); // settled by the run; a run that fails before is not news
  return { ...created, outcome };
}

/**
 * The kill rounds on one file, each resuming the writer, each judged; a round that already
 * lost an acknowledged append ends them. Notes the rounds' figures and returns the last
 * judgement.
 */
async function killRounds(cell: PrefixRun): Promise<PrefixJudgement> {
  const { ctx, options, db, acksPath } = cell;
  const rounds = options.rounds ?? 3;
  const killTimes: number[] = [];
  let judged!: PrefixJudgement;
  let acks: Append[] = [];
  for (let round = 1; round <= rounds; round++) {
    const { killTime, selfKilled } = await killRound(cell, round);
    killTimes.push(killTime);
    // The writer died at the instant of an acknowledgement (between appends) or at
    // a random moment (inside one).
    ctx.observeLeg(db, `round ${round}`, selfKilled);
    acks = readAckJournal<Append>(acksPath);
    judged = await judgePrefix(ctx.target, db, acks);
    // A round that already lost an acknowledged append ends the run: check now.
    if (judged.lost > 0) break;
  }
  ctx.note("rounds", killTimes.length);
  ctx.note("killAfterMs", killTimes);
  const acknowledged = acknowledgedOf(acks).length;
  ctx.note("acknowledged", acknowledged);
  ctx.note("refusedTexts", acks.length - acknowledged);
  ctx.note("recovered", judged.rows.length);
  // Every round ended in one SIGKILL (the parent's, or the writer's own).
  tally(ctx, "sigkills", killTimes.length);
  tally(ctx, "acknowledgedOps", acknowledged);
  tally(ctx, "lost", judged.lost);
  return judged;
}

/**
 * One round: the writer resumes the file and dies. Even rounds: it SIGKILLs itself the
 * instant its k-th append of the round is acknowledged, the moment a store that
 * acknowledges before COMMIT is exposed (the kill time noted as `-k`). Odd rounds: the
 * parent kills it at a random moment past the threshold (noted in ms).
 */
async function killRound(
  cell: PrefixRun,
  round: number,
): Promise<{ killTime: number; selfKilled: boolean }> {
  const { ctx, options, db, acksPath } = cell;
  const threshold = options.minAcknowledged ?? 200;
  const deadlineMs = options.deadlineMs ?? 60_000;
  const before = countAcks(acksPath);
  const selfKill = round % 2 === 0 ? threshold + Math.floor(ctx.random() * threshold) : undefined;
  const child = ctx.spawn(
    PREFIX_WRITER,
    [db, acksPath, ...(selfKill ? [String(selfKill)] : [])],
  );
  const observed = () => `${countAcks(acksPath) - before} acknowledged this round`;
  try {
    if (selfKill) {
      await waitFor(() => child.exited !== undefined, {
        what: `the writer to kill itself after acknowledged append ${selfKill} (round ${round})`,
        deadlineMs,
        observed,
        progress: ctx.progress(() => countAcks(acksPath)),
      });
      ok(classifyExit(child.exited!).kind === "killed", child.describe());
      return { killTime: -selfKill, selfKilled: true };
    }
    const waited = await waitFor(() => countAcks(acksPath) >= before + threshold, {
      what: `${threshold} acknowledged appends (round ${round})`,
      deadlineMs,
      children: [child],
      observed,
      progress: ctx.progress(() => countAcks(acksPath)),
    });
    await killLanding(child, `the writer after ${threshold} appends (round ${round})`);
    return { killTime: Math.round(waited), selfKilled: false };
  } finally {
    await reapAll([child]);
    ctx.note("childStderr", child.stderr.slice(-2000));
  }
}

/**
 * Inside an append with no declared crash point: a kill at each of its calls (the
 * writer's third append: two acknowledged before it), each state judged and resumed.
 */
async function appendSeries(cell: PrefixRun): Promise<void> {
  const { ctx, t, options } = cell;
  const points = (await loadTarget(ctx.target)).crashPoints?.() ?? [];
  const kind = seriesKind(options.killSeries);
  if (kind === "off" || points.some((p) => p.startsWith("appendMessage:"))) return;
  await killSeries(ctx, t, {
    op: "appendMessage",
    occurrence: 3,
    // A store's periodic work (a compaction every few appends) is walked too.
    busiestOf: 24,
    script: PREFIX_WRITER,
    args: (db, dir) => [db, `${dir}/acks.jsonl`],
    async check(db, dir, label) {
      const state = await judgePrefix(
        ctx.target,
        db,
        readAckJournal<Append>(`${dir}/acks.jsonl`),
      );
      await checkSteps(t, state.checks, `${label}: `);
    },
    resume: (db, dir, label) => resumePrefix(cell, { db, acksPath: `${dir}/acks.jsonl` }, label),
    kind,
  });
}

/** The step on the session created beside round 1: it survived the kill right after it. */
async function creationStep(
  t: Deno.TestContext,
  created: Creation,
  outcome: PromiseSettledResult<string | null>,
): Promise<void> {
  await t.step("an acknowledged session creation survives a kill right after it", () => {
    if (outcome.status === "rejected") throw outcome.reason;
    const missing = outcome.value;
    diagnosed(
      "ack-before-commit",
      () => ok(missing === null, `the acknowledged session ${created.id} is lost: ${missing}`),
    );
  });
}

/**
 * Resume after recovery: a fresh writer continues the recovered transcript (from what the
 * store reads back), kills itself right after its third acknowledged append, and the file
 * is judged again with every acknowledged append of both lives.
 */
async function resumePrefix(
  run: Pick<PrefixRun, "ctx" | "t">,
  files: Pick<PrefixRun, "db" | "acksPath">,
  label: string,
): Promise<void> {
  const { ctx, t } = run;
  const { db, acksPath } = files;
  const before = acknowledgedOf(readAckJournal<Append>(acksPath)).length;
  const what = `${label}, resumed`;
  const args = [db, acksPath, String(RESUMED_OPS)];
  const resume = { ops: "appends", script: PREFIX_WRITER, args, db, label };
  if (!await resumedStep(ctx, t, resume)) return;
  const acks = readAckJournal<Append>(acksPath);
  tally(ctx, "acknowledgedOps", acknowledgedOf(acks).length - before);
  const state = await judgePrefix(ctx.target, db, acks);
  tally(ctx, "lost", state.lost);
  await checkSteps(t, state.checks, `${what}: `);
}

/** How the store at `db` shows that it has no session `id`, or `null` when it has it. */
async function sessionMissing(target: string, db: string, id: string): Promise<string | null> {
  const store = await openTargetStore(target, db);
  try {
    if (store.getSession) {
      return await store.getSession(id) ? null : `getSession("${id}") finds no session`;
    }
    if (store.listSessions) {
      const ids = (await store.listSessions()).map((session) => session.id);
      return ids.includes(id) ? null : `listSessions() lists ${JSON.stringify(ids)}`;
    }
    // With neither, an append asks: a store refuses one to a session it does not have
    // (one that creates sessions on append cannot be judged here, and passes).
    try {
      await store.appendMessage(id, { role: "user", content: "after the kill" });
      return null;
    } catch (error) {
      return `an append to it is refused: ${error instanceof Error ? error.message : error}`;
    }
  } finally {
    await store.close();
  }
}
