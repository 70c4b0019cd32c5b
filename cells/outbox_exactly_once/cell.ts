import { classifyExit } from "../../harness/child.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { untilExited } from "../moves/kill.ts";
import { repeatBeside, repeatedStep } from "../moves/repeated.ts";
import { seriesKind } from "../moves/kill_series.ts";
import { sweepAtomicity } from "./sweep_atomicity.ts";
import { outboxStops } from "./stops.ts";
import { raceSeriesOf } from "../moves/race.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { SENDER_AFTER_ATTEMPTING } from "./inbox.ts";
import {
  choosePolicy,
  declaredPolicy,
  type PolicyChoice,
  type SweepAnswer,
} from "./delivery_policy.ts";
import { judgeScenario } from "./judge.ts";
import {
  KILL_KINDS,
  printedClaims,
  runScenario,
  type ScenarioCounts,
  type ScenarioKind,
} from "./scenario.ts";
import { loadTarget } from "../contract/target.ts";
import { RECOVERER, SENDER } from "./_children.ts";

export { type RecoveredOutbox, recoverOutbox } from "./state.ts";

/**
 * Options of {@linkcode outboxExactlyOnceCell}.
 *
 * @example
 * ```ts
 * import { outboxExactlyOnceCell, type OutboxExactlyOnceOptions } from "./cell.ts";
 * const options: OutboxExactlyOnceOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   obligations: 10,
 *   recoverers: 4,
 * };
 * for (const test of await outboxExactlyOnceCell(options)) Deno.test(test);
 * ```
 */
export interface OutboxExactlyOnceOptions extends CellOptions {
  /** Obligations the sender records (default 5). */
  obligations?: number;
  /** Sweepers of the first clean boot, racing after each kill (default 3, at least 3). */
  recoverers?: number;
  /**
   * Which transports each kill kind runs with: `both` (the default, which the matrix and
   * `deno task mutants` use), or `one`: half the scenarios, for a quick run (the project's
   * own `deno test`): the transport that does not deduplicate, where the delivery policy
   * shows, except sent-unacked, which runs the idempotent one.
   */
  transports?: "both" | "one";
}

/**
 * What the store's sweep answers for one maybe-sent obligation (its owner died while it
 * was attempting) on a transport that does not deduplicate: the policy probe, run when the
 * target declares no delivery policy.
 */
async function probePolicy(ctx: CellRun): Promise<SweepAnswer[]> {
  const dir = ctx.run.file("policy-probe");
  await Deno.mkdir(`${dir}/db`, { recursive: true });
  const [db, inbox] = [`${dir}/db/store.db`, `${dir}/inbox.jsonl`];
  const sender = ctx.spawn(SENDER, [db, inbox, "1", "-"], {
    env: { SESSION_DB_CRASH_AT: `${SENDER_AFTER_ATTEMPTING}@1` },
  });
  await untilExited(sender, `the policy probe's sender to reach ${SENDER_AFTER_ATTEMPTING}`);
  if (classifyExit(sender.exited!).kind !== "killed") return [];
  tally(ctx, "sigkills", 1);
  ctx.observeLeg(db, `policy probe: ${SENDER_AFTER_ATTEMPTING}`, true);
  // The answer is what the sweep returned for the orphan: a sweep that returned nothing
  // said nothing (its owner may have looked alive), so a fresh one asks again, twice at most.
  for (let attempt = 1; attempt <= 3; attempt++) {
    const sweeper = ctx.spawn(RECOVERER, [db, inbox, dir, `probe${attempt}`, "-", "0"]);
    await untilExited(sweeper, "the policy probe's sweep");
    const claims = printedClaims(sweeper);
    if (claims.length) return claims.map((c) => ({ action: c.action, maybeSent: true }));
  }
  return [];
}

/**
 * Cell 5, delivery-outbox exactly-once, judged under the delivery policy the store keeps:
 * a crash between a send and its durable record must not double-deliver on catch-up, and
 * no obligation may be silently dropped. The policy is the target's `deliveryPolicy`
 * (`at-most-once` or `marked-at-least-once`), else the one its sweep implies (a probe: a
 * maybe-sent obligation answered `resend` on a transport that does not deduplicate is
 * `marked-at-least-once`), noted in the report as `deliveryPolicy`.
 *
 * A sender child records 5 obligations, then for each marks it attempting, sends it to a
 * durable inbox file (the platform: the obligation id as idempotency key, fsynced) and
 * marks it delivered. It is killed at the third obligation: recorded-unsent
 * (`recordObligation:afterCommit`), attempting-unsent (`markAttempting:afterCommit`),
 * sent-unacked (`sender:afterSend`), and twice with a boot then killed right after its
 * first redelivery (`recoverer:afterSend`): after sent-unacked (a crash during a resend)
 * and after recorded-unsent (a boot killed in a plain redelivery). The store's points run
 * when the target lists them; otherwise the sender dies right after the call returned. A
 * second process then records a backlog of `recoverers` + 1 obligations across 3 sessions
 * and is killed right after its last recording: with the sender's, the first clean boot
 * owes at least `recoverers` + 3, more than it has sweepers and than a small per-call cap.
 *
 * Then the first clean boot: 3 sweepers (`recoverers`) over the dead owners' obligations,
 * each held just before its first write inside its sweep until every other has read or
 * is refused a lock by a held one (the forced worst case, through the `LD_PRELOAD`
 * recorder; verified), then redelivering. Their claims are disjoint and together exactly
 * the owed set, and each sweep took every owed obligation it saw (one transaction: only one
 * of them claims anything). Per obligation the platform holds exactly the (unmarked, marked) copies
 * the policy promises (delivered (1,0), pending (1,0), attempting (0,1), sent (1,1), one
 * more marked after a boot killed in its resend; at-most-once resends nothing), each with
 * the recorded content behind a marker with a visible character, and every obligation ends terminal (delivered; unknown, failed or
 * abandoned with a reason where the policy allows it). With the idempotent transport
 * (every kind runs with both unless `transports: "one"`) every obligation arrives exactly
 * once after dedupe. Two later boots claim nothing and change nothing in the store's
 * folder (every entry, by name, size and digest; the database's `-shm` and an empty `-wal`
 * or `-journal` aside) or the inbox; on the plain transport they, and the new life's boot,
 * leave `idempotentTransport` out (a plain transport, judged as one). A new life then records 3 more obligations, dies sent-unacked and is recovered by
 * one more boot: the first life is unchanged and the new one judged the same way. States
 * valid, recovery deterministic, invariants hold. Every leg.
 *
 * The guards, with obligations in several states at once: while the first clean boot
 * runs, the restarted sender (the application back after the crash, alive throughout)
 * holds one obligation pending and one attempting of its own; it re-records the dead
 * sender's and tries to attempt each that is no longer pending (refused); after a crash
 * during a resend it books the dead sender's send with its old fence from the sender's
 * journal, once the killed boot's acknowledged sweep is shown to have taken it over
 * (refused). Afterwards a sweep finds nothing left to take, its own two are intact and it
 * delivers them, then it is SIGKILLed right after its last acknowledged mark: that delivery
 * must be on disk. The killed boot's acknowledged sweep is on disk after it died. Sweep
 * atomicity: a recoverer killed inside its sweep (at the target's
 * `sweepRecoverable:afterClaim`, else before each of the sweep's file-system calls in
 * turn) leaves two attempting orphans both taken or neither.
 *
 * Stops, with the race series on (`raceSeries`: the matrix and the mutants task): each of
 * the sweep, the attempt and the delivery mark the target declares no crash point in is
 * stopped before each of its lock calls in turn while another process moves: another
 * sweep takes the same dead owner's obligations and a live owner dies (every sweep's
 * claims disjoint, together all that was owed), the pending obligation is settled
 * (`markUnknown`, else `markFailed`: the stale attempt is refused), or a recovery takes
 * the attempt over under a new fence (the stale mark is refused, the recovery's own is
 * accepted). At least one move must land during a stop.
 *
 * @param options Target, leg, obligation and sweeper counts, transports.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { outboxExactlyOnceCell } from "./cell.ts";
 * for (const test of await outboxExactlyOnceCell({ target: new URL("../reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function outboxExactlyOnceCell(
  options: OutboxExactlyOnceOptions,
): Promise<Deno.TestDefinition[]> {
  const counts = validCounts(options);
  return defineCell({
    id: 5,
    // The sweepers' hold and the sweep's kill series run through the LD_PRELOAD recorder.
    preloads: true,
    run: (ctx, t) => outboxRun({ ctx, t, options, counts }),
  }, options);
}

/** The options' counts, checked (a `TypeError` names the one that cannot run). */
function validCounts(options: OutboxExactlyOnceOptions): ScenarioCounts {
  const obligations = options.obligations ?? 5;
  const recoverers = options.recoverers ?? 3;
  if (options.transports !== undefined && !["both", "one"].includes(options.transports)) {
    throw new TypeError(
      `Invalid transports "${options.transports}": use "both" (the default) or "one"`,
    );
  }
  if (!Number.isSafeInteger(recoverers) || recoverers < 3) {
    throw new TypeError(
      `Invalid recoverers ${recoverers}: use 3 or more (the worst case needs three sweepers at once)`,
    );
  }
  if (!Number.isSafeInteger(obligations) || obligations < 4) {
    throw new TypeError(
      `Invalid obligations ${obligations}: use 4 or more (the sender dies at its third, with one pending after it)`,
    );
  }
  return { obligations, recoverers };
}

/** What cell 5's phases share: the run, its steps, the options and the checked counts. */
interface OutboxRun {
  ctx: CellRun;
  t: Deno.TestContext;
  options: OutboxExactlyOnceOptions;
  counts: ScenarioCounts;
}

/**
 * Cell 5's phases: the kill points chosen, the delivery policy judged, every kill kind's
 * scenarios run and judged (beside the first, one content recorded twice for two messages),
 * the sweep's atomicity, and the stops inside guarded writes.
 */
async function outboxRun(cell: OutboxRun): Promise<void> {
  const { ctx, t, options, counts } = cell;
  startTallies(ctx);
  const listed = new Set((await loadTarget(ctx.target)).crashPoints?.() ?? []);
  const kinds = killPoints(ctx, listed);
  const choice = await judgedPolicy(ctx);
  const started = performance.now();
  const repeated = repeatBeside(ctx, "obligations");
  for (const kind of kinds) await killKind(cell, kind, choice);
  await repeatedStep(t, "obligations", repeated);
  await sweepAtomicity(ctx, t, {
    listed,
    kind: seriesKind(options.killSeries),
    obligations: counts.obligations,
  });
  // Inside each guarded write the target declares no crash point in: a stop at each of
  // its lock calls while a competing process moves (on with the race series).
  if (raceSeriesOf(options.raceSeries) === "locks") await outboxStops(ctx, t, listed);
  ctx.note("elapsedMs", Math.round(performance.now() - started));
}

/** Each kill kind at the store's point when the target lists it, else at its fallback. */
function killPoints(ctx: CellRun, listed: ReadonlySet<string>): Omit<ScenarioKind, "idempotent">[] {
  const kinds = KILL_KINDS.map((kind) => ({
    kind,
    point: kind.fallback && !listed.has(kind.point) ? kind.fallback : kind.point,
  }));
  ctx.note("killPoints", kinds.map((k) => `${k.kind.name}: ${k.point}`));
  return kinds;
}

/** The delivery policy judged: the declared one, else the one the probe's sweep implies. */
async function judgedPolicy(ctx: CellRun): Promise<PolicyChoice> {
  const declared = await declaredPolicy(ctx.target);
  const choice = choosePolicy(declared, declared ? [] : await probePolicy(ctx));
  ctx.note("deliveryPolicy", choice);
  console.log(`  delivery policy judged: ${choice.policy} (${choice.why})`);
  return choice;
}

/**
 * One kill kind's scenarios, one per transport: they share nothing (own folder, database
 * and inbox), so they run side by side and are judged in order.
 */
async function killKind(
  cell: OutboxRun,
  which: Omit<ScenarioKind, "idempotent">,
  choice: PolicyChoice,
): Promise<void> {
  const { ctx, t, options, counts } = cell;
  const transports = options.transports === "one"
    ? [which.kind.name === "sent-unacked"]
    : [false, true];
  const scenarios = await Promise.all(
    transports.map((idempotent) => runScenario(ctx, { ...which, idempotent }, counts)),
  );
  for (const scenario of scenarios) {
    await judgeScenario(ctx, t, { scenario, choice, obligations: counts.obligations });
  }
}
