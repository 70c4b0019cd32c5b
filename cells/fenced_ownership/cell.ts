import { deepStrictEqual, ok } from "node:assert/strict";
import { releaseBarrier } from "../../harness/barrier.ts";
import type { Child } from "../../harness/child.ts";
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import { besideStore } from "../../harness/evidence.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { settlementGuards } from "./settlement.ts";
import { stopSeries } from "../moves/guarded_stops.ts";
import { raceSeriesOf } from "../moves/race.ts";
import { noteLeaseOverrun, stopPastLease, takeWitness } from "../moves/lease_witness.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { spanOf } from "../engine/span.ts";
import { type Answer, describeAnswer, verdict } from "../contract/typed.ts";
import { openTargetStore, type Store, type StoreMethod } from "../contract/target.ts";
import { continuations, invariantsOf, withStore } from "../contract/with_store.ts";
import { STALE_OWNER } from "./_children.ts";

/**
 * An owner cell 7 stops past its lease: the compression-lock holder, a handoff claimant,
 * an outbox attempt.
 *
 * @example
 * ```ts
 * import type { FencedOwner } from "./cell.ts";
 * const owners: FencedOwner[] = ["compressionLock", "outboxAttempt"];
 * ```
 */
export type FencedOwner = "compressionLock" | "handoffClaim" | "outboxAttempt";

/**
 * Options of {@linkcode fencedOwnershipCell}.
 *
 * @example
 * ```ts
 * import { fencedOwnershipCell, type FencedOwnershipOptions } from "./cell.ts";
 * const options: FencedOwnershipOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   owners: ["compressionLock"],
 *   leaseMs: 500,
 * };
 * for (const test of await fencedOwnershipCell(options)) Deno.test(test);
 * ```
 */
export interface FencedOwnershipOptions extends CellOptions {
  /** Which owners (default: every one the store has the methods for). */
  owners?: readonly FencedOwner[];
  /** The compression lock's lease (default 300 ms); the stale owner is stopped past it. */
  leaseMs?: number;
  /** Repeats of every scenario (default `CELLS_SPAN`, else 1). */
  span?: number;
}

/** The methods each owner's scenarios need beyond the cell's own. */
const OWNER_METHODS: Record<FencedOwner, readonly StoreMethod[]> = {
  compressionLock: [],
  handoffClaim: [
    "requestHandoff",
    "claimHandoff",
    "completeHandoff",
    "failHandoff",
    "getHandoffState",
  ],
  outboxAttempt: [
    "recordObligation",
    "markAttempting",
    "markDelivered",
    "markUnknown",
    "getObligation",
  ],
};

/**
 * When the stale owner resumes: after its lease expired with nobody taking over
 * (`expired`), after another took over but before it acted (`before`), or after the new
 * owner acted (`after`).
 */
type Order = "expired" | "before" | "after";
/** The stops inside guarded writes each owner gets (`_fence_series.ts`). */
const STOPPED: Record<FencedOwner, readonly string[]> = {
  compressionLock: ["publish", "release", "acquire"],
  handoffClaim: ["complete", "completeFailed", "failCompleted"],
  outboxAttempt: ["delivered", "unknownDelivered", "unknownAttempted"],
};

const ORDERS: Record<FencedOwner, readonly Order[]> = {
  compressionLock: ["expired", "before", "after"],
  handoffClaim: ["before", "after"],
  // The takeover of an attempt is the settling mark itself: there is no "before".
  outboxAttempt: ["after"],
};

/** The stale owner's heartbeat count (it beats every few ms while it waits). */
function beats(path: string): number {
  return Number(fileText(path)?.trim() ?? 0);
}

interface Scenario {
  owner: FencedOwner;
  order: Order;
  label: string;
  db: string;
  session: string;
}

interface Outcome {
  stale: Answer;
  /** What the new owner's actions returned, in order. */
  fresh: unknown[];
  /** Heartbeats the owner made while it should have been stopped. */
  stalled: number;
  /** How long past its end the store kept the owner's lease (its witness's), when watched. */
  overrunMs?: number | undefined;
  /** State read right after the stale owner acted (before the new owner's act). */
  between?: unknown;
  /** The final recovered state, read twice. */
  final: unknown;
  again: unknown;
  invariants: string[];
}

function finalState(target: string, scenario: Scenario, obligationId?: string) {
  return withStore(target, scenario.db, async (store) => {
    const { sessions, children } = await continuations(store);
    const handoff = scenario.owner === "handoffClaim"
      ? await store.getHandoffState!(scenario.session)
      : undefined;
    const obligation = obligationId ? await store.getObligation!(obligationId) : undefined;
    const invariants = await invariantsOf(store);
    return {
      state: {
        sessions,
        children,
        handoff,
        obligation: obligation
          ? { state: obligation.state, lastError: obligation.lastError }
          : undefined,
      },
      invariants,
    };
  });
}

/** The stale owner as it runs: its child, what it took, and its files. */
interface StaleOwner {
  child: Child;
  /** When it took ownership, and of what (an outbox attempt's obligation and fence). */
  acquired: { at: number; id?: string; fence?: number };
  /** One of its signal files (`<db>.<name>`). */
  file: (name: string) => string;
}

/**
 * One scenario: the owner takes its ownership and is stopped past its lease, the new
 * owner takes over (and acts, when it acts first), the stale owner resumes and acts (the
 * new owner acting after it otherwise), then the state is read twice.
 */
async function runScenario(
  ctx: CellRun,
  scenario: Scenario,
  leaseMs: number,
): Promise<Outcome> {
  const { order } = scenario;
  const fresh: unknown[] = [];
  let stalled = -1;
  let overrunMs: number | undefined;
  let between: unknown;
  const store: Store = await openTargetStore(ctx.target, scenario.db);
  try {
    const owner = await startOwner(ctx, store, { scenario, leaseMs });
    // Only the lock's lease is the store's to end: the others are taken over by a call.
    const witness = scenario.owner === "compressionLock"
      ? await takeWitness(store, { session: `${scenario.session}-witness`, ttlMs: leaseMs })
      : undefined;
    ({ beats: stalled, overrunMs } = await stopPastLease(owner.child, {
      who: `${scenario.label}: the owner`,
      acquiredAt: owner.acquired.at,
      leaseMs,
      beats: () => beats(owner.file("beat")),
      ...witness ? { lapse: { store, witness } } : {},
    }));
    await takeOver(store, scenario, { acquired: owner.acquired, fresh });
    if (order === "after") await newOwnerActs(store, scenario, fresh);
    await resumeStale(owner, scenario);
    if (order === "before") {
      between = scenario.owner === "handoffClaim"
        ? await store.getHandoffState!(scenario.session)
        : undefined;
      await newOwnerActs(store, scenario, fresh);
    }
  } finally {
    await store.close();
  }
  return await outcomeOf(ctx, scenario, { fresh, stalled, overrunMs, between });
}

/**
 * The session and its work, then the owner child, once it has taken its ownership and
 * waits for its turn.
 */
async function startOwner(
  ctx: CellRun,
  store: Store,
  run: { scenario: Scenario; leaseMs: number },
): Promise<StaleOwner> {
  const { scenario, leaseMs } = run;
  const { owner, session } = scenario;
  const file = (name: string) => besideStore(scenario.db, name);
  await store.createSession(session);
  await store.appendMessage(session, { role: "user", content: "work before the takeover" });
  if (owner === "handoffClaim") await store.requestHandoff!(session, "cell7");
  const child = ctx.spawn(STALE_OWNER, [
    scenario.db,
    owner,
    session,
    String(leaseMs),
    file("acquired"),
    file("go"),
    file("result"),
    file("beat"),
  ]);
  await waitFor(() => fileText(file("acquired")) !== undefined, {
    what: `${scenario.label}: the owner to take its ${owner}`,
    deadlineMs: 30_000,
    children: [child],
  });
  await waitFor(() => beats(file("beat")) > 0, {
    what: `${scenario.label}: the owner to wait for its turn`,
    deadlineMs: 30_000,
    children: [child],
  });
  const acquired = JSON.parse(fileText(file("acquired"))!) as StaleOwner["acquired"];
  return { child, acquired, file };
}

/** The new owner's holder name. */
const NEW_HOLDER = `cell7-new:pid=${Deno.pid}`;

/**
 * The takeover, what it returned pushed to `moves.fresh`: the lock taken (unless it only
 * expired), the handoff failed, requested and claimed again, or the attempt settled.
 */
async function takeOver(
  store: Store,
  scenario: Scenario,
  moves: { acquired: StaleOwner["acquired"]; fresh: unknown[] },
): Promise<void> {
  const { owner, order, session } = scenario;
  const { acquired, fresh } = moves;
  if (owner === "compressionLock" && order !== "expired") {
    fresh.push(await store.tryAcquireCompressionLock!(session, NEW_HOLDER, 60_000));
  } else if (owner === "handoffClaim") {
    fresh.push(await store.failHandoff!(session, "the claimant stalled past its lease"));
    fresh.push(await store.requestHandoff!(session, "cell7"));
    fresh.push(await store.claimHandoff!(session));
  } else if (owner === "outboxAttempt") {
    fresh.push(
      await store.markUnknown!(acquired.id!, acquired.fence!, "the owner stalled past its lease"),
    );
  }
}

/**
 * The new owner acts: publishes and releases (the lock), or completes (the handoff); what
 * each call returned, or the name of what it threw, pushed to `fresh`.
 */
async function newOwnerActs(store: Store, scenario: Scenario, fresh: unknown[]): Promise<void> {
  const { owner, session } = scenario;
  const attempt = async (call: () => unknown) => {
    try {
      fresh.push(await call());
    } catch (error) {
      fresh.push(`threw ${error instanceof Error ? error.name : String(error)}`);
    }
  };
  if (owner === "compressionLock") {
    await attempt(async () =>
      await store.publishCompressionChild!({
        parentId: session,
        childId: "child-new",
        holder: NEW_HOLDER,
        messages: [{ role: "system", content: "new summary" }],
      }) !== undefined
    );
    await attempt(() => store.releaseCompressionLock!(session, NEW_HOLDER));
  } else if (owner === "handoffClaim") {
    await attempt(() => store.completeHandoff!(session));
  }
}

/** The stale owner resumes (SIGCONT) and acts; it must exit 0. */
async function resumeStale(owner: StaleOwner, scenario: Scenario): Promise<void> {
  const { child, file } = owner;
  releaseBarrier(file("go"));
  child.signal("SIGCONT");
  await waitFor(() => child.exited !== undefined, {
    what: `${scenario.label}: the resumed owner to act and exit`,
    deadlineMs: 30_000,
  });
  const status = await child.status;
  ok(status.code === 0, `the resumed owner crashed: ${child.describe()}`);
}

/** The stale owner's answer and the final state, read twice, with what the run saw. */
async function outcomeOf(
  ctx: CellRun,
  scenario: Scenario,
  seen: Pick<Outcome, "fresh" | "stalled" | "overrunMs" | "between">,
): Promise<Outcome> {
  const file = (name: string) => besideStore(scenario.db, name);
  const stale = JSON.parse(fileText(file("result")) ?? "{}") as Answer;
  const obligationId = scenario.owner === "outboxAttempt"
    ? (JSON.parse(fileText(file("acquired"))!) as { id: string }).id
    : undefined;
  const first = await finalState(ctx.target, scenario, obligationId);
  const second = await finalState(ctx.target, scenario, obligationId);
  return {
    stale,
    fresh: seen.fresh,
    stalled: seen.stalled,
    overrunMs: seen.overrunMs,
    between: seen.between,
    final: first.state,
    again: second.state,
    invariants: first.invariants,
  };
}

function fileText(path: string): string | undefined {
  try {
    const text = Deno.readTextFileSync(path);
    return text.endsWith("\n") ? text : undefined;
  } catch {
    return undefined;
  }
}

const STALE_ACT: Record<FencedOwner, string> = {
  compressionLock: "publishCompressionChild",
  handoffClaim: "completeHandoff",
  outboxAttempt: "markDelivered",
};

async function checkScenario(
  cell: Pick<FencedRun, "ctx" | "t">,
  scenario: Scenario,
  out: Outcome,
): Promise<void> {
  const { ctx, t } = cell;
  const { owner, order, label } = scenario;
  const said = verdict(out.stale);
  const answer = describeAnswer(out.stale);
  tally(ctx, "acknowledgedOps", out.fresh.length);
  await t.step(`${label}: the owner was frozen by SIGSTOP past its lease`, () => {
    ok(
      out.stalled >= 0 && out.stalled <= 1,
      `the owner made ${out.stalled} heartbeat(s) while it should have been stopped`,
    );
  });
  await t.step(`${label}: the stale ${STALE_ACT[owner]} is refused with a typed error`, () => {
    ok(said !== "accepted", `the stale owner's ${STALE_ACT[owner]} was accepted: ${answer}`);
    ok(said !== "untyped", `the refusal is not typed: ${answer}`);
  });
  const final = out.final as {
    sessions: { id: string; parentSessionId: string | null; endReason: string | null }[];
    children: Record<string, (string | null)[]>;
    handoff?: string | null;
    obligation?: { state: string; lastError: string | null };
  };
  await t.step(`${label}: not durable, and the new owner's work intact`, () => {
    if (owner === "compressionLock") {
      ok(
        !final.sessions.some((s) => s.id === "child-stale"),
        "the stale owner's continuation child-stale exists",
      );
      const parent = final.sessions.find((s) => s.id === scenario.session);
      if (order === "expired") {
        ok(parent?.endReason === null, `the parent ended (${parent?.endReason}) with no new owner`);
      } else {
        deepStrictEqual(
          out.fresh,
          [true, true, true],
          "the new owner's takeover, publish, release",
        );
        ok(parent?.endReason === "compression", `parent ended by ${parent?.endReason}`);
        deepStrictEqual(final.children["child-new"], ["new summary"]);
      }
    } else if (owner === "handoffClaim") {
      if (order === "before") {
        ok(
          out.between === "running",
          `the new claim is ${out.between} after the stale claimant acted, not running`,
        );
      }
      deepStrictEqual(
        out.fresh,
        [true, true, true, true],
        "the new owner's fail, request, claim and complete",
      );
      ok(final.handoff === "completed", `the handoff ended ${final.handoff}`);
    } else {
      deepStrictEqual(out.fresh, [true], "the new owner's settling mark");
      ok(
        final.obligation?.state === "unknown" &&
          final.obligation.lastError === "the owner stalled past its lease",
        `the obligation is ${JSON.stringify(final.obligation)}, not the new owner's mark`,
      );
    }
  });
  await t.step(`${label}: recovery deterministic, integrity and invariants`, () => {
    deepStrictEqual(out.again, out.final);
    const integrity = integrityIfSqlite(scenario.db);
    ok(integrity === undefined || integrity === "ok", `integrity_check: ${integrity}`);
    deepStrictEqual(out.invariants, []);
  });
}

/**
 * Cell 7, fenced ownership: an owner that lost its lease cannot act. For each owner the
 * contract has — the compression-lock holder, a claimed handoff, an outbox attempt — a
 * child becomes the owner and is stopped with SIGSTOP (asserted stopped) past its
 * lease; another process (the test) takes over; the child resumes with SIGCONT and
 * acts as the owner it was, after its lease expired with nobody taking over, after the
 * takeover but before the new owner acted, and after it acted. Its write must be
 * refused (a typed error, or the method's documented `false`/`null`), must not be
 * durable, and the new owner's work must be intact; recovery deterministic, integrity
 * and invariants. Beside the fences, one process settles handoffs and outbox attempts
 * next to bystanders: each settling call changes only what it names, from a state it
 * may leave, under its fence, and the last (killed right after it) is durable. SIGSTOP, not a barrier: a store that renews leases from a timer must
 * not renew them while its process is frozen. Owners whose methods the store lacks are
 * left out and named in the figures. Every leg.
 *
 * @param options Target, leg, owners, lease.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { fencedOwnershipCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await fencedOwnershipCell({ target })) Deno.test(test);
 * ```
 */
export function fencedOwnershipCell(
  options: FencedOwnershipOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 7,
    // The stops inside the fenced writes load the recorder (LD_PRELOAD).
    preloads: true,
    run: (ctx, t) => fencedRun({ ctx, t, options }),
  }, options);
}

/** What cell 7's phases share: the run, its steps and the options. */
interface FencedRun {
  ctx: CellRun;
  t: Deno.TestContext;
  options: FencedOwnershipOptions;
}

/**
 * Cell 7's phases: the owners the store has, every scenario at once, each judged, the
 * stops inside the fenced writes, and the settlement guards.
 */
async function fencedRun(cell: FencedRun): Promise<void> {
  const { ctx, t, options } = cell;
  startTallies(ctx);
  const owners = await probeOwners(cell);
  const scenarios = scenariosOf(cell, owners);
  const outcomes = await runScenarios(cell, scenarios);
  for (const [i, scenario] of scenarios.entries()) {
    await checkScenario(cell, scenario, outcomes[i]!);
  }
  // Inside each guarded write the target declares no crash point in: a stop at each
  // of its lock calls while a new owner takes over or settles (on with the race series).
  if (raceSeriesOf(options.raceSeries) === "locks") {
    await stopSeries(ctx, t, owners.flatMap((owner) => STOPPED[owner]));
  }
  // The settling calls beside the fences: only what they name, durable at the ack.
  for (const owner of owners) {
    if (owner !== "compressionLock") await settlementGuards(ctx, t, owner);
  }
}

/**
 * The owners to probe: those asked for (default all) whose methods the store has; the
 * others noted as left out. A step fails when none is left.
 */
async function probeOwners(cell: FencedRun): Promise<FencedOwner[]> {
  const { ctx, t, options } = cell;
  const probe = await openTargetStore(ctx.target, ctx.run.store("methods"));
  const has = (m: StoreMethod) => typeof probe[m] === "function";
  await probe.close();
  const wanted = options.owners ?? (Object.keys(OWNER_METHODS) as FencedOwner[]);
  const owners: FencedOwner[] = [];
  const leftOut: Record<string, string> = {};
  for (const owner of wanted) {
    const missing = OWNER_METHODS[owner].filter((m) => !has(m));
    if (missing.length) leftOut[owner] = `the store lacks ${missing.join(", ")}`;
    else owners.push(owner);
  }
  ctx.note("owners", owners);
  if (Object.keys(leftOut).length) ctx.note("ownersLeftOut", leftOut);
  await t.step(`owners probed: ${owners.join(", ") || "none"}`, () => {
    ok(owners.length > 0, `no owner to probe: ${JSON.stringify(leftOut)}`);
  });
  return owners;
}

/** Every owner's orders, `span` rounds of them, each on a file of its own. */
function scenariosOf(cell: FencedRun, owners: readonly FencedOwner[]): Scenario[] {
  const span = Math.max(1, Math.round(spanOf(cell.options.span)));
  const scenarios: Scenario[] = [];
  for (let round = 0; round < span; round++) {
    for (const owner of owners) {
      for (const order of ORDERS[owner]) {
        const label = `${owner} · ${order}${span > 1 ? ` · ${round + 1}` : ""}`;
        scenarios.push({
          owner,
          order,
          label,
          db: cell.ctx.run.store(`${owner}-${order}-${round}`),
          session: `fenced-${owner}`,
        });
      }
    }
  }
  return scenarios;
}

/**
 * Runs every scenario at once (independent files and children), notes the stale owners'
 * answers, and observes the mode once they are done (no process is killed here).
 */
async function runScenarios(cell: FencedRun, scenarios: readonly Scenario[]): Promise<Outcome[]> {
  const { ctx, options } = cell;
  const leaseMs = options.leaseMs ?? 300;
  const started = performance.now();
  const outcomes = await Promise.all(scenarios.map((s) => runScenario(ctx, s, leaseMs)));
  ctx.note("elapsedMs", Math.round(performance.now() - started));
  tally(ctx, "sigkills", 0);
  ctx.note(
    "staleAnswers",
    Object.fromEntries(scenarios.map((s, i) => {
      const r = outcomes[i]!.stale;
      return [s.label, r.threw ? r.name : JSON.stringify(r.value)];
    })),
  );
  noteLeaseOverrun(ctx, outcomes.map((outcome) => outcome.overrunMs));
  ctx.observeLeg(scenarios[0]?.db ?? ctx.run.store("methods"), "after the owners", true);
  return outcomes;
}
