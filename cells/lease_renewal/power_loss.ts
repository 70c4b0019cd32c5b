import type { StateCheck, StateJudgement } from "../engine/state_check.ts";
import { openTargetStore, type Store } from "../contract/target.ts";
import { awaitLapse, takeWitness } from "../moves/lease_witness.ts";
import { type Answer, answerOf, describeAnswer, verdict } from "../contract/typed.ts";
import {
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "../power_loss/record.ts";
import { powerLossKillCell } from "../power_loss/steps.ts";
import { countAckEntries, writerRun } from "../power_loss/writer_run.ts";
import { staleRenewalProblem } from "./judge.ts";
import { type RenewalEntry, RENEWER_LEASE_MS } from "./_renewals.ts";
import { recovered } from "./_read_back.ts";
import { RENEWER } from "./_children.ts";

/** The holder whose takeovers probe each state's locks (no `pid=`: only expiry decides). */
const THIRD = "cell11-third";
const HOUR = 3_600_000;
/** The session of the witness of the short leases, in the first state judged. */
const WITNESS = "cell11-witness";

/**
 * What another holder's takeover of each probed lock was answered, by session, once the
 * short leases lapsed: `lapsed` waits (once a run) for a witness taken on this state.
 */
async function takeovers(
  target: string,
  db: string,
  probe: { sessions: readonly string[]; lapsed: (store: Store) => Promise<void> },
): Promise<Map<string, Answer>> {
  const store = await openTargetStore(target, db);
  try {
    await probe.lapsed(store);
    const answers = new Map<string, Answer>();
    for (const s of probe.sessions) {
      answers.set(s, await answerOf(() => store.tryAcquireCompressionLock!(s, THIRD, HOUR)));
    }
    return answers;
  } finally {
    await store.close();
  }
}

/** Why the renewals answered show a problem: a live lease's renewal refused in time. */
function liveRefusals(answered: readonly RenewalEntry[]): string[] {
  return answered.flatMap((e) =>
    // A renewal answered only after its short lease could have lapsed is not judged.
    e.op === "renew" && verdict(e.answer!) !== "accepted" && e.t1! < e.at + RENEWER_LEASE_MS
      ? [`the renewal of ${e.s}'s live lease was not acknowledged: ${describeAnswer(e.answer!)}`]
      : []
  );
}

/**
 * A wait, once a run, until every short lease the writer took lapsed as the store sees it:
 * the first state judged takes a witness (the writer is dead, so it is taken after them
 * all) and waits until another holder can take it over; the states after it wait no more.
 */
function shortLeasesLapse(): (store: Store) => Promise<void> {
  let lapsed: Promise<unknown> | undefined;
  return (store) => {
    // A state that could not take the witness (the store's FAIL there) leaves it to the next.
    lapsed ??= takeWitness(store, { session: WITNESS, ttlMs: RENEWER_LEASE_MS })
      .then((witness) => awaitLapse(store, witness, { what: "the short leases to lapse" }))
      .catch((error) => {
        lapsed = undefined;
        throw error;
      });
    return lapsed.then(() => {});
  };
}

/**
 * Judges one crash state: past every short lease taken before its instant, another holder
 * must be refused the lock of each acknowledged renewal (durable) and must take the lapsed
 * lock of each stale renewal invoked at once (the refused renewal changed nothing); every
 * stale renewal answered refused; two fresh reads the same, integrity, invariants.
 */
async function judgeRenewals(
  state: { target: string; db: string; lapsed: (store: Store) => Promise<void> },
  entries: readonly RenewalEntry[],
): Promise<StateJudgement> {
  const { target, db, lapsed } = state;
  const { problems } = await recovered(target, db);
  const answered = entries.filter((e) => e.k === "ack");
  const renewed = answered.filter((e) => e.op === "renew" && verdict(e.answer!) === "accepted");
  const stale = entries.filter((e) => e.k === "inv" && e.op === "stale");
  const sessions = [...renewed, ...stale].map((e) => e.s);
  const took = await takeovers(target, db, { sessions, lapsed });
  const lost = renewed.flatMap((e) =>
    verdict(took.get(e.s)!) === "accepted"
      ? [`the acknowledged renewal of ${e.s} is lost: another holder took its lock over`]
      : []
  );
  const revived = stale.flatMap((e) =>
    verdict(took.get(e.s)!) === "accepted" ? [] : [
      `a third holder could not take over the lapsed lock of ${e.s}: the stale renewal revived it (${
        describeAnswer(took.get(e.s)!)
      })`,
    ]
  );
  const refusals = answered.flatMap((e) => {
    const problem = e.op === "stale" ? staleRenewalProblem(e.answer!) : undefined;
    return problem ? [`${e.s}: ${problem}`] : [];
  });
  const checks: StateCheck[] = [
    {
      name: "an acknowledged renewal holds past the short lease",
      violations: liveRefusals(answered),
      missing: lost,
    },
    {
      name: "a stale renewal is refused and changes nothing",
      violations: [...refusals, ...revived],
      missing: [],
    },
    { name: "recovery deterministic, integrity and invariants", violations: problems, missing: [] },
  ];
  return { checks, lost: lost.length };
}

/**
 * One recorded run of cell 11's renewer: rounds of a live lease renewed to an hour and a
 * lapsed one renewed by its stale holder, each renewal journaled when invoked and once
 * answered, under the file-system call recorder; SIGKILLed right after a random
 * acknowledged renewal past `minAcknowledged` answers (`ack`, by its own count, so for any
 * store) or at a random moment past them. Every crash state is judged against the journal
 * lines before its instant.
 *
 * @param options Leg, target, folder, kill, thresholds (answered renewals), states.
 * @returns The counts (`acknowledged` in answered renewals).
 * @example
 * ```ts ignore
 * import { currentLeg } from "../../harness/legs.ts";
 * import { powerLossRenewalRun } from "./power_loss.ts";
 * const run = await powerLossRenewalRun({
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 * });
 * console.log(run.losingStates, run.corruptStates, run.statesChecked);
 * ```
 */
export function powerLossRenewalRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  return writerRun(options, {
    operations: 8,
    // Two journal lines a renewal: its invocation and its answer.
    linesPerOperation: 2,
    writer: ({ files, run, operations, random }) => {
      // Two renewals a round, one of them of a live lease: die after the k-th of those.
      const rounds = Math.ceil(operations / 2);
      const killAt = run.kill === "ack" ? [String(rounds + Math.floor(random() * rounds))] : [];
      return {
        script: RENEWER,
        args: [files.db, files.acks, ...killAt],
        what: "journal lines (two a renewal)",
      };
    },
    judging: (run) => {
      const lapsed = shortLeasesLapse();
      return {
        judge: (db, lines) =>
          judgeRenewals({ target: run.target, db, lapsed }, parseAcks<RenewalEntry>(lines)),
        acknowledged: countAckEntries,
      };
    },
  });
}

/**
 * Cell 11 in the power-loss tier: the renewer runs under the recorder and is SIGKILLed
 * right after an acknowledged renewal and at a random moment. In every power-loss state,
 * past the short lease, another holder is refused the lock of every renewal acknowledged
 * before the state's instant (a renewal that returned is durable) and takes at once the
 * lapsed lock of every stale holder's renewal (refused, it changed nothing); integrity,
 * invariants, two fresh reads the same. A store without `refreshCompressionLock` is
 * SKIPPED with the name.
 *
 * @param options Target, leg, thresholds (answered renewals), states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossRenewalCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossRenewalCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossRenewalCell(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return powerLossKillCell({
    id: 11,
    what: "renewals",
    run: powerLossRenewalRun,
  }, options);
}
