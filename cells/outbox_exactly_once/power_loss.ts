import { dirname, join } from "node:path";
import { countReady, releaseBarrier } from "../../harness/barrier.ts";
import { type Child, classifyExit, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { readInbox, SENDER_AFTER_SEND } from "./inbox.ts";
import { choosePolicy, declaredPolicy, type ObligationHistory } from "./delivery_policy.ts";
import { type LifeRunner, resumeLife } from "./boots.ts";
import { claimsCheck, resumeChecks } from "./judge.ts";
import { type Claim, printedClaims } from "./scenario.ts";
import {
  judgeOutbox,
  missingAcknowledged,
  type RecoveredOutbox,
  recoverOutbox,
  senderAtKill,
} from "./state.ts";
import {
  checkStates,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
  recordAndKill,
  runFiles,
} from "../power_loss/record.ts";
import { powerLossCell, powerLossSteps } from "../power_loss/steps.ts";
import type { StateCheck, StateJudgement } from "../engine/state_check.ts";
import { CELL_METHODS, type DeliveryPolicy, loadTarget } from "../contract/target.ts";
import { declaredPermissions } from "../contract/target_access.ts";
import { spawnFor } from "../engine/run.ts";
import { RECOVERER, SENDER } from "./_children.ts";

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
 * import { currentLeg } from "../../harness/legs.ts";
 * import {
 *   powerLossOutboxRun,
 *   type PowerLossOutboxRunOptions,
 * } from "./power_loss.ts";
 * const options: PowerLossOutboxRunOptions = {
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
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

/** Spawns the cells' children on a state's copy, with the target's access. */
async function childRunner(options: PowerLossOutboxRunOptions, dir: string): Promise<LifeRunner> {
  const { leg, target } = options;
  const permissions = await declaredPermissions(target);
  return { target, spawn: spawnFor({ leg, target, runDir: dir, permissions }) };
}

/** Recoverers racing on a state's copy; how each ended and what each claimed. */
async function raceRecoverers(
  options: PowerLossOutboxRunOptions,
  dir: string,
  idempotent: boolean,
): Promise<{ failed: string[]; sweeps: { name: string; claims: Claim[] }[] }> {
  const runner = await childRunner(options, dir);
  const count = options.recoverers ?? 3;
  const barrier = join(dir, "go");
  const racers: Child[] = [];
  try {
    for (let i = 0; i < count; i++) {
      racers.push(runner.spawn(RECOVERER, [
        join(dir, "store.db"),
        join(dir, "inbox.jsonl"),
        dir,
        `r${i}`,
        barrier,
        idempotent ? "1" : "0",
      ]));
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
  return {
    failed: racers.filter((r) => classifyExit(r.exited!).kind !== "won").map((r) =>
      `recoverer failed: ${r.describe()}`
    ),
    sweeps: racers.map((r, i) => ({ name: `r${i}`, claims: printedClaims(r) })),
  };
}

/**
 * The sender's obligations as this state holds them: the one in flight at an
 * unacknowledged attempt may be attempting or, where the power loss dropped the attempt,
 * still pending; one recorded and not acknowledged may be absent.
 */
function stateHistories(
  point: string,
  obligations: number,
  before: RecoveredOutbox,
): { histories: ObligationHistory[]; optional: string[] } {
  const sender = senderAtKill(point, obligations);
  const stored = new Map(before.obligations.map((o) => [o.content, o.state]));
  const histories = sender.histories.map((h): ObligationHistory =>
    point === "markAttempting:afterCommit" && h.kind === "attempting" &&
      stored.get(h.content) === "pending"
      ? { ...h, kind: "pending" }
      : h
  );
  const optional = sender.histories.slice(sender.acknowledgedRecorded).map((h) => h.content);
  return { histories, optional };
}

/**
 * Judges one crash state of cell 5, once per transport on its own copy (the state and the
 * inbox the sender left): recoverers race on it, then the SIGKILL cell 5's judge rules
 * under the delivery policy (the declared one, else the one the plain copy's sweeps imply):
 * exact copies per obligation (once after dedupe with the idempotent transport), the
 * recorded content, terminal states, none silently lost, states valid, recovery
 * deterministic, integrity and invariants; their claims disjoint and exactly what the
 * state owed. Then a new life on the recovered copy: new obligations, killed sent-unacked,
 * one more boot, and both lives judged. `lost` counts acknowledged recordings absent and
 * acknowledged deliveries not delivered, before recovery.
 */
async function judgeOutboxState(
  options: PowerLossOutboxRunOptions,
  declared: DeliveryPolicy | undefined,
  db: string,
  inbox: string,
): Promise<StateJudgement> {
  const obligations = options.obligations ?? 5;
  const sender = senderAtKill(options.point, obligations);
  const state = dirname(db);
  const before = await recoverOutbox(options.target, db);
  const lost = missingAcknowledged(before, sender);
  const { histories, optional } = stateHistories(options.point, obligations, before);
  const owed = before.obligations.filter((o) => o.state === "pending" || o.state === "attempting")
    .map((o) => o.content).sort();
  const maybeSent = new Set(
    before.obligations.filter((o) => o.state === "attempting").map((o) => o.obligationId),
  );
  const checks: StateCheck[] = [];
  let policy = declared;
  for (const idempotent of [false, true]) {
    const label = idempotent ? "idempotent" : "non-idempotent";
    const dir = join(state, label);
    Deno.mkdirSync(dir);
    for (const entry of Deno.readDirSync(state)) {
      if (entry.isFile) Deno.copyFileSync(join(state, entry.name), join(dir, entry.name));
    }
    Deno.copyFileSync(inbox, join(dir, "inbox.jsonl"));
    const raced = await raceRecoverers(options, dir, idempotent);
    policy ??= choosePolicy(
      undefined,
      raced.sweeps.flatMap((s) =>
        s.claims.map((c) => ({ action: c.action, maybeSent: maybeSent.has(c.id) }))
      ),
    ).policy;
    const copy = join(dir, "store.db");
    const judged = await judgeOutbox({
      target: options.target,
      db: copy,
      arrivals: readInbox(join(dir, "inbox.jsonl")),
      idempotent,
      policy,
      histories,
      optional,
      sender,
    });
    const contentOf = new Map(judged.outbox.obligations.map((o) => [o.obligationId, o.content]));
    const claims = claimsCheck(
      "the recoverers claimed disjoint sets, together exactly what the state owed",
      raced.sweeps,
      { owed, contentOf: (id) => contentOf.get(id) },
    );
    const runner = await childRunner(options, dir);
    const files = { idempotent, dir, db: copy, inbox: join(dir, "inbox.jsonl") };
    const resumed = await resumeChecks(await resumeLife(runner, files), {
      target: options.target,
      db: copy,
      idempotent,
      policy,
    });
    const raceCheck = { name: "recoverers exited 0", violations: raced.failed, missing: [] };
    checks.push(...[raceCheck, ...judged.checks, claims, ...resumed.checks].map((check) => ({
      name: `${label}: ${check.name}`,
      violations: check.violations.map((p) => `${label}: ${check.name}: ${p}`),
      missing: check.missing,
    })));
  }
  return { lost, checks };
}

/**
 * One recorded run of cell 5's sender: it records `obligations` obligations under the
 * file-system call recorder, then marks each attempting, sends it (to the inbox, the fake transport,
 * outside the database's folder: what the receiver got survives the power loss) and
 * marks it delivered, and dies at `point` at its third obligation. Then on every crash
 * state, for each transport on its own copy, recoverers race `sweepRecoverable` and
 * redeliver, and the state is judged (`judgeOutboxState`).
 *
 * @param options Leg, target, folder, the kill point, counts, states.
 * @returns The counts.
 * @example
 * ```ts
 * import { currentLeg } from "../../harness/legs.ts";
 * import { powerLossOutboxRun } from "./power_loss.ts";
 * const run = await powerLossOutboxRun({
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
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
  const files = runFiles(run.dir);
  const inbox = join(run.dir, "inbox.jsonl");
  const obligations = run.obligations ?? 5;
  await recordAndKill(run, files, {
    script: SENDER,
    args: [files.db, inbox, String(obligations)],
    what: `obligations (dies at ${run.point}@3)`,
    env: { SESSION_DB_CRASH_AT: `${run.point}@3` },
  });
  Deno.writeFileSync(inbox, new Uint8Array(), { append: true });
  const declared = await declaredPolicy(run.target);
  // Only the kill's instant: the sender's acknowledgements are known at the kill point.
  return checkStates({ ...run, instants: 1 }, files, {
    judge: (db) => judgeOutboxState(run, declared, db, inbox),
  });
}

/**
 * Cell 5 in the power-loss tier: the sender runs under the recorder and dies at
 * its third obligation at each kill point (recorded-unsent, attempting-unsent,
 * sent-unacked; the store's points when the target lists them). On every crash state,
 * for each transport on its own copy, recoverers race `sweepRecoverable` and redeliver:
 * every acknowledged recording and delivery must be in every power-loss state after it; in every
 * state each effect is observed at most once (exactly once with the idempotent
 * transport), no obligation is silently lost, recovery deterministic, integrity and
 * invariants. The receiver's inbox is outside the power loss (the provider got it).
 *
 * @param options Target, leg, states, obligation and recoverer counts.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossOutboxCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossOutboxCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossOutboxCell(
  options: PowerLossOptions & { obligations?: number; recoverers?: number },
): Promise<Deno.TestDefinition[]> {
  return powerLossCell({
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
        await powerLossSteps(ctx, t, { what: "operations", run, label: point });
      }
    },
  }, options);
}
