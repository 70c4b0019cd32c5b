import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type Child, classifyExit, TIMED_OUT } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { killAfterLastWrite, killAfterLastWriteThenRead } from "../moves/kill.ts";
import { handoffStates } from "../contract/with_store.ts";
import { releasedTogether } from "../moves/released_together.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { diagnosed } from "../engine/diagnoses.ts";
import { claimSeries } from "./claim_series.ts";
import { stopSeries } from "../moves/guarded_stops.ts";
import { raceSeriesOf } from "../moves/race.ts";
import { loadTarget, openTargetStore } from "../contract/target.ts";
import { openRetriedWhileBusy } from "../contract/busy_retried.ts";
import { CLAIMANT } from "./_children.ts";

/**
 * Options of {@linkcode consumeOnceCell}.
 *
 * @example
 * ```ts
 * import { consumeOnceCell, type ConsumeOnceOptions } from "./cell.ts";
 * const options: ConsumeOnceOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   claimants: 16,
 *   rounds: 3,
 * };
 * for (const test of await consumeOnceCell(options)) Deno.test(test);
 * ```
 */
export interface ConsumeOnceOptions extends CellOptions {
  /** Racing claimants (default 8). */
  claimants?: number;
  /** Races run one after another, each on a fresh pending handoff (default 1). */
  rounds?: number;
}

/**
 * Cell 2, consume-once: a parked handoff is claimed by exactly one of N racing
 * processes. N = 8 claimant children open the store, then are released together by a
 * file barrier; each exits 0 (won) or 10 (lost), and any other code fails the cell with
 * that child's stderr. Exactly one 0; the stored state is `running`.
 *
 * Beside the race, on other sessions of the same file, a child requests a handoff, which
 * the test process must read at once, then claims another and is SIGKILLed the instant
 * the claim is acknowledged (nothing written or closed after it): the claim must survive
 * the kill. No request or claim touches another session's handoff (an idle session
 * keeps none, the parked one stays `pending`), and a request of a handoff already
 * `pending` or `running` is refused and resets nothing.
 * Every leg: the race rests on one predicated UPDATE, but whether an acknowledged write
 * survives a kill is the journal's business.
 *
 * @param options Target, leg, claimant count, rounds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { consumeOnceCell } from "./cell.ts";
 * for (const test of await consumeOnceCell({ target: new URL("../reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function consumeOnceCell(options: ConsumeOnceOptions): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 2,
    // The claim's worst case stops the claimants under the recorder (LD_PRELOAD).
    preloads: true,
    run: (ctx, t) => consumeRun({ ctx, t, options, db: ctx.run.store("store") }),
  }, options);
}

/** What cell 2's phases share: the run, its steps, the options and the raced file. */
interface ConsumeRun {
  ctx: CellRun;
  t: Deno.TestContext;
  options: ConsumeOnceOptions;
  db: string;
}

/** A round's step, named `round <n>: <name>`. */
type RoundStep = (name: string, fn: () => void) => Promise<unknown>;

/** Cell 2's phases: the claim rounds, then the forced worst cases (the race series). */
async function consumeRun(cell: ConsumeRun): Promise<void> {
  startTallies(cell.ctx);
  const rounds = cell.options.rounds ?? 1;
  const winners: number[] = [];
  for (let round = 0; round < rounds; round++) winners.push(await claimRound(cell, round));
  cell.ctx.note("winnersPerRound", winners);
  await worstCases(cell);
}

/**
 * One round: a handoff parked beside others, the claimants raced for it while a child
 * writes beside them, the race and what it left judged, then resumed. Returns the winners.
 */
async function claimRound(cell: ConsumeRun, round: number): Promise<number> {
  const { ctx, t, db } = cell;
  const step: RoundStep = (name, fn) => t.step(`round ${round + 1}: ${name}`, fn);
  const session = `cell2-${round}`;
  const others = await parkBeside(ctx, db, session);
  const beside = writeBeside(ctx, db, others);
  const children = await raceClaimants(cell, round, session);
  const { won, gaveUp } = await judgeRace(ctx, step, children);
  if (gaveUp) {
    await beside;
    return won;
  }
  const written = await beside;
  const read = await readAfterRace(ctx, db, { session, others });
  // A claim is lost when its winner exited 0 and the state does not show it.
  tally(ctx, "lost", won > 0 && read.state !== "running" ? won : 0);
  tally(ctx, "lost", written.claimed === true && read.after.claimed !== "running" ? 1 : 0);
  await claimedSteps(step, { db, others, read, written });
  await isolationSteps(step, { session, others, read });
  await resumeClaims(ctx, step, { db, session, others });
  return won;
}

/**
 * The claimant children, opened on the store and released together by a file barrier;
 * returns them once every one has exited (reaped).
 */
async function raceClaimants(cell: ConsumeRun, round: number, session: string): Promise<Child[]> {
  const { ctx, db } = cell;
  const claimants = cell.options.claimants ?? 8;
  const dir = ctx.run.file(`round-${round}`);
  await Deno.mkdir(dir);
  const barrier = `${dir}/go`;
  return await releasedTogether(
    (i) => ctx.spawn(CLAIMANT, [db, dir, `c${i}`, barrier, session]),
    { count: claimants, what: "claimants", dir, barrier },
  );
}

/**
 * How the claimants exited: every one won or lost cleanly, exactly one won. `gaveUp`: they
 * only gave up waiting for the barrier (the race never ran as planned, no verdict).
 */
async function judgeRace(
  ctx: CellRun,
  step: RoundStep,
  children: readonly Child[],
): Promise<{ won: number; gaveUp: boolean }> {
  const classes = children.map((child) => classifyExit(child.exited!));
  const crashed = children.filter((_, i) =>
    classes[i]!.kind !== "won" && classes[i]!.kind !== "lost"
  );
  const won = classes.filter((c) => c.kind === "won").length;
  // A claim is acknowledged to its claimant by the store's `true` (exit 0).
  tally(ctx, "acknowledgedOps", won);
  ctx.note("exitCodes", classes.map((c) => c.signal ?? c.code));
  const gaveUp = crashed.length > 0 &&
    crashed.every((c) => !c.exited!.signal && c.exited!.code === TIMED_OUT);
  await step("every claimant exited 0 or 10", () => {
    const text = `${crashed.length} claimant(s) crashed (neither won nor lost):\n${
      crashed.map((child) => child.describe()).join("\n")
    }`;
    if (gaveUp) throw new HarnessError(text);
    ok(crashed.length === 0, text);
  });
  if (gaveUp) return { won, gaveUp };
  await step(`exactly one winner (${won})`, () => {
    diagnosed(
      won > 1 && "claim-without-predicate",
      () => strictEqual(won, 1, `${won} claimants won the same handoff`),
    );
  });
  return { won, gaveUp };
}

/** What a fresh process reads once the race and the child beside it are done. */
interface AfterRace {
  /** The raced handoff's state. */
  state: string | null;
  /** The states of the sessions beside it. */
  after: { idle: string | null; parked: string | null; claimed: string | null };
  /**
   * A re-request of the raced and the parked handoff, then their states: a request of a
   * handoff already pending or running is refused and resets nothing.
   */
  again: unknown[];
  invariants: string[];
}

/** Reads the raced session and those beside it, and re-requests two handoffs. */
async function readAfterRace(
  ctx: CellRun,
  db: string,
  raced: { session: string; others: Beside },
): Promise<AfterRace> {
  const { session, others } = raced;
  const check = await openTargetStore(ctx.target, db);
  const stateOf = async (id: string) => await check.getHandoffState!(id);
  const state = await stateOf(session);
  const after = {
    idle: await stateOf(others.idle),
    parked: await stateOf(others.parked),
    claimed: await stateOf(others.claimed),
  };
  // A request of a handoff already pending or running is refused and resets nothing.
  const again = [
    await check.requestHandoff!(session, "cell2-again"),
    await check.requestHandoff!(others.parked, "cell2-again"),
    await stateOf(session),
    await stateOf(others.parked),
  ];
  const invariants = check.checkInvariants ? await check.checkInvariants() : [];
  await check.close();
  return { state, after, again, invariants };
}

/**
 * The claims as stored: the race's winner running, the file sound; the request beside it
 * seen at once, its claim surviving the kill right after it.
 */
async function claimedSteps(
  step: RoundStep,
  round: { db: string; others: Beside; read: AfterRace; written: Written },
): Promise<void> {
  const { db, others, read, written } = round;
  const { state, after, invariants } = read;
  await step("stored state running", () => {
    strictEqual(state, "running");
    const integrity = integrityIfSqlite(db);
    ok(integrity === undefined || integrity === "ok", `integrity_check: ${integrity}`);
    ok(invariants.length === 0, `invariants: ${invariants.join("; ")}`);
  });
  await step("a request is seen at once, a claim survives a kill right after it", () => {
    if (written.error !== undefined) throw written.error;
    const { parked, claimed } = others;
    strictEqual(written.requested, true, `requestHandoff("${parked}") answered false`);
    strictEqual(
      written.claimed,
      true,
      `claimHandoff("${claimed}"), unrivalled, answered false`,
    );
    strictEqual(
      written.seen,
      "pending",
      `the acknowledged request of ${parked} is not visible to another process: it reads ${written.seen}`,
    );
    strictEqual(
      after.claimed,
      "running",
      `the acknowledged claim of ${claimed} is lost: its state is ${after.claimed}`,
    );
  });
}

/**
 * Each request or claim touched only its own session, and a request of a handoff already
 * pending or running was refused and reset nothing.
 */
async function isolationSteps(
  step: RoundStep,
  round: { session: string; others: Beside; read: AfterRace },
): Promise<void> {
  const { session, others, read: { after, again } } = round;
  await step("a request or a claim changes only its own session", () => {
    strictEqual(
      after.idle,
      null,
      `${others.idle}, never requested, has a ${after.idle} handoff: a request of another session parked it`,
    );
    strictEqual(
      after.parked,
      "pending",
      `${others.parked}, parked and never claimed, is ${after.parked}: a claim of another session took it`,
    );
  });
  await step("a request of a pending or running handoff is refused, nothing reset", () => {
    strictEqual(again[0], false, `requestHandoff of the running ${session} answered true`);
    strictEqual(
      again[1],
      false,
      `requestHandoff of the pending ${others.parked} answered true`,
    );
    strictEqual(again[2], "running", `the re-request reset ${session} to ${again[2]}`);
    strictEqual(again[3], "pending", `the re-request left ${others.parked} ${again[3]}`);
  });
}

/**
 * The worst cases, forced (on with the race series): every claimant stopped inside its
 * claim, then all continued (where the target declares no crash point in the claim); and a
 * request stopped at each of its lock calls while another process requests and claims the
 * handoff.
 */
async function worstCases(cell: ConsumeRun): Promise<void> {
  const { ctx, t, options } = cell;
  const points = (await loadTarget(ctx.target)).crashPoints?.() ?? [];
  if (
    raceSeriesOf(options.raceSeries) === "locks" &&
    !points.some((p) => p.startsWith("claimHandoff:"))
  ) {
    await claimSeries(ctx, t);
  }
  if (raceSeriesOf(options.raceSeries) === "locks") await stopSeries(ctx, t, ["request"]);
}

/**
 * Resume after recovery: on the file the killed child left, a fresh process creates a
 * session, parks and claims a new handoff on it and is SIGKILLed right after the claim is
 * acknowledged; the new claim must be there, and the race's and the earlier claims as they
 * were (a store that reads its past back but cannot take the next claim fails).
 */
async function resumeClaims(
  ctx: CellRun,
  step: RoundStep,
  raced: { db: string; session: string; others: Beside },
): Promise<void> {
  const { db, session, others } = raced;
  const fresh = `${session}-resumed`;
  const read = [fresh, session, others.claimed, others.parked, others.idle];
  const { answers, read: states = {}, failed } = await killAfterLastWriteThenRead(ctx, db, {
    writes: [
      { method: "createSession", session: fresh },
      { method: "requestHandoff", session: fresh },
      { method: "claimHandoff", session: fresh },
    ],
    read: (store) => handoffStates(store, read),
  });
  tally(ctx, "acknowledgedOps", answers.length);
  tally(ctx, "lost", answers[2] === true && states[fresh] !== "running" ? 1 : 0);
  await step("resumed: a new handoff is parked and claimed, both lives' claims kept", () => {
    if (failed !== undefined) throw failed;
    strictEqual(
      answers[1],
      true,
      `requestHandoff("${fresh}") on the recovered file answered ${answers[1]}`,
    );
    strictEqual(answers[2], true, `claimHandoff("${fresh}"), unrivalled, answered ${answers[2]}`);
    deepStrictEqual(states, {
      [fresh]: "running",
      [session]: "running",
      [others.claimed]: "running",
      [others.parked]: "pending",
      [others.idle]: null,
    });
  });
}

/** The sessions beside a round's race. */
interface Beside {
  /** Never requested: no request of another session may park it. */
  idle: string;
  /** Requested by the child beside the race, never claimed. */
  parked: string;
  /** Parked by the setup, claimed by the child beside the race. */
  claimed: string;
}

/** Creates and parks the raced session and those beside it (see {@linkcode Beside}). */
async function parkBeside(ctx: CellRun, db: string, session: string): Promise<Beside> {
  const beside = {
    idle: `${session}-idle`,
    parked: `${session}-parked`,
    claimed: `${session}-claimed`,
  };
  const setup = await openTargetStore(ctx.target, db);
  // Each parked as it is created, and the idle one created after both: a request that
  // parks every session shows on it (made by the child's request of `parked`).
  for (const id of [session, beside.claimed]) {
    await setup.createSession(id);
    ok(
      await setup.requestHandoff!(id, "cell2"),
      `requestHandoff("${id}") did not park a session without a handoff`,
    );
  }
  for (const id of [beside.idle, beside.parked]) await setup.createSession(id);
  await setup.close();
  return beside;
}

/** What the child beside the race was answered, and saw; never rejects. */
interface Written {
  requested?: unknown;
  claimed?: unknown;
  /** The parked session's state read from this process once the request was acknowledged. */
  seen?: string | null;
  error?: unknown;
}

/**
 * Beside the race, on other sessions (so never in its way): a child requests `parked`,
 * which this process must see at once, then claims `claimed` and is SIGKILLed the instant
 * the claim is acknowledged, with nothing written after it.
 */
async function writeBeside(ctx: CellRun, db: string, beside: Beside): Promise<Written> {
  const out: Written = {};
  try {
    [out.requested, out.claimed] = await killAfterLastWrite(ctx, db, {
      writes: [
        { method: "requestHandoff", session: beside.parked },
        { method: "claimHandoff", session: beside.claimed },
      ],
      async between() {
        // Read as an application beside the race: a store may refuse its open as busy there.
        const reader = await openRetriedWhileBusy(ctx.target, db);
        try {
          out.seen = await reader.getHandoffState!(beside.parked);
        } finally {
          await reader.close();
        }
      },
    });
  } catch (error) {
    out.error = error;
  }
  return out;
}
