// Cell 5's scenarios, the judging half (_outbox_scenario.ts runs them): the kills landed,
// each boot claimed exactly what was owed (the first clean boot's sweepers disjointly,
// under the forced worst case), the copies and end states the delivery policy promises,
// later boots that change nothing, and a new life recovered beside the first.
import { ok } from "node:assert/strict";
import { classifyExit } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import type { CellRun } from "../engine/cell.ts";
import type { ObligationHistory, PolicyChoice } from "./delivery_policy.ts";
import type { DeliveryPolicy } from "../contract/target.ts";
import { LIFE_TWO, type ResumedLife } from "./boots.ts";
import { type Claim, LIVE, printedClaims, type Scenario } from "./scenario.ts";
import { judgeOutbox, type RecoveredOutbox, senderAtKill } from "./state.ts";
import { checkSteps, type StateCheck } from "../engine/state_check.ts";
import { tally } from "../engine/tally.ts";
import { readReport } from "../../internal/report_line.ts";
import { shownContent } from "./_content.ts";

/** What a boot owed, for {@linkcode claimsCheck}. */
export interface OwedClaims {
  /** The contents of the obligations it owed. */
  owed: readonly string[];
  /** An obligation's content by its id. */
  contentOf: (id: string) => string | undefined;
  /** What the sweeper itself printed, named when the check fails. */
  printed?: string | undefined;
}

/**
 * The sweeps of one boot against what it owed: every obligation claimed by one sweep at
 * most (disjoint), together exactly the owed ones (by content), and each sweep took every
 * owed obligation it saw (one transaction: only one of them claims anything).
 *
 * @example
 * ```ts ignore
 * const check = claimsCheck("claims", [{ name: "r0", claims: [{ id: "a", action: "send" }] }], {
 *   owed: ["effect 0"],
 *   contentOf: (id) => ({ a: "effect 0" })[id],
 * });
 * console.log(check.violations); // []
 * ```
 */
export function claimsCheck(
  name: string,
  sweeps: readonly { name: string; claims: readonly Claim[] }[],
  boot: OwedClaims,
): StateCheck {
  const { owed, contentOf, printed } = boot;
  const takers = new Map<string, string[]>();
  for (const sweep of sweeps) {
    for (const claim of sweep.claims) {
      takers.set(claim.id, [...takers.get(claim.id) ?? [], `${sweep.name}: ${claim.action}`]);
    }
  }
  const violations = [...takers].filter(([, by]) => by.length > 1).map(([id, by]) =>
    `"${contentOf(id) ?? id}" claimed by ${by.length} concurrent sweeps (${
      by.join("; ")
    }): they must be disjoint`
  );
  const claimed = new Set([...takers.keys()].map((id) => contentOf(id) ?? id));
  const missing = owed.filter((c) => !claimed.has(c));
  const extra = [...claimed].filter((c) => !owed.includes(c));
  if (missing.length) {
    violations.push(`owed and not claimed: ${missing.map((c) => `"${c}"`).join(", ")}`);
  }
  if (extra.length) {
    violations.push(`claimed and not owed: ${extra.map((c) => `"${c}"`).join(", ")}`);
  }
  // Each sweep is one transaction and nothing becomes owed during a boot: the first to
  // commit saw every owed obligation, so claims spread over two sweeps show one that left
  // owed obligations behind (a per-call cap, say) for the other to take.
  const claiming = sweeps.filter((s) => s.claims.length > 0);
  if (claiming.length > 1) {
    violations.push(
      `${
        claiming.map((s) => `${s.name} claimed ${s.claims.length}`).join(", ")
      }: a sweep takes every owed obligation it sees, in one transaction, so the first to commit left behind what the others took`,
    );
  }
  // What the sweeper itself said, to tell a sweep that met nothing from one that lost it.
  if (violations.length && printed) violations.push(`the sweeper printed ${printed}`);
  return { name, violations, missing: [] };
}

/** The histories of the sender's and the backlog's obligations, with a killed boot's copy. */
function historiesOf(
  s: Scenario,
  obligations: number,
  contentOf: (id: string) => string | undefined,
) {
  const killedSent = new Set((s.armed?.sent ?? []).map((a) => contentOf(a.obligationId)));
  const sender = senderAtKill(s.point, obligations);
  const backlog = s.backlog.contents.map((content): ObligationHistory => ({
    content,
    kind: "pending",
  }));
  const histories: ObligationHistory[] = [...sender.histories, ...backlog].map((h) =>
    killedSent.has(h.content) ? { ...h, killedBootSent: true } : h
  );
  return { sender, histories };
}

function idsToContents(read: RecoveredOutbox): (id: string) => string | undefined {
  const byId = new Map(read.obligations.map((o) => [o.obligationId, o.content]));
  return (id) => byId.get(id);
}

/** The new life's checks, and the acknowledged operations it made and lost. */
export interface ResumeVerdict {
  checks: StateCheck[];
  acknowledged: number;
  lost: number;
}

/** Where {@linkcode resumeChecks} judges a new life, and under which policy. */
export interface LifeScope {
  target: string;
  /** The file the new life ran on. */
  db: string;
  /** Whether the transport deduplicates by key. */
  idempotent: boolean;
  /** The policy judged (on a transport that does not deduplicate). */
  policy: DeliveryPolicy;
}

/**
 * The new life: the first life's rows and copies untouched, the new ones recovered under
 * `scope.policy` like the first, its boot claiming exactly what it owed.
 *
 * @example
 * ```ts ignore
 * const life = await resumeLife(ctx, files);
 * const verdict = await resumeChecks(life, { target, db, idempotent: false, policy });
 * console.log(verdict.lost);
 * ```
 */
export async function resumeChecks(r: ResumedLife, scope: LifeScope): Promise<ResumeVerdict> {
  const { target, db, idempotent, policy } = scope;
  const after = new Map(r.reads[0].obligations.map((o) => [o.obligationId, o]));
  const changed = r.before.obligations.flatMap((o) => {
    const now = after.get(o.obligationId);
    return JSON.stringify(now) === JSON.stringify(o)
      ? []
      : [`"${shownContent(o.content)}" was ${JSON.stringify(o)} and is now ${JSON.stringify(now)}`];
  });
  if (!r.inboxKept) changed.push("the platform's copies from before the new life changed");
  const life = senderAtKill(LIFE_TWO.point, LIFE_TWO.obligations, {
    prefix: LIFE_TWO.prefix,
    at: LIFE_TWO.at,
  });
  const judged = await judgeOutbox({
    target,
    db,
    arrivals: r.arrivals,
    idempotent,
    policy,
    histories: life.histories,
    others: r.before.obligations.map((o) => o.content),
    sender: life,
    reads: r.reads,
    sound: r.sound,
  });
  const owed = life.histories.filter((h) => h.kind !== "delivered").map((h) => h.content);
  const checks = [
    {
      name: "its kill landed, its boot exited 0",
      violations: [
        ...(classifyExit(r.sender.exited!).kind === "killed"
          ? []
          : [`sender: ${r.sender.describe()}`]),
        ...(classifyExit(r.boot.exited!).kind === "won" ? [] : [`boot: ${r.boot.describe()}`]),
      ],
      missing: [],
    },
    claimsCheck(
      "its boot claimed exactly what was owed",
      [{ name: "boot", claims: printedClaims(r.boot) }],
      {
        owed,
        contentOf: idsToContents(r.reads[0]),
        printed: JSON.stringify(readReport(r.boot.stdout)),
      },
    ),
    ...judged.checks,
    { name: "the first life's obligations and copies unchanged", violations: changed, missing: [] },
  ].map((c) => ({ ...c, name: `new life: ${c.name}` }));
  return {
    checks,
    acknowledged: life.acknowledgedRecorded + life.acknowledgedDelivered,
    lost: judged.lost + changed.length,
  };
}

/** Every process ended as the scenario needs: the kills landed, every boot exited 0. */
function endings(s: Scenario): string[] {
  const wrong: string[] = [];
  if (classifyExit(s.sender.exited!).kind !== "killed") {
    wrong.push(`sender: ${s.sender.describe()}`);
  }
  if (classifyExit(s.backlog.child.exited!).kind !== "killed") {
    wrong.push(`the backlog's process: ${s.backlog.child.describe()}`);
  }
  if (s.armed && classifyExit(s.armed.child.exited!).kind !== "killed") {
    wrong.push(`the boot killed in its redelivery: ${s.armed.child.describe()}`);
  }
  const boots = [
    ...s.racers.map((r) => r.child),
    ...s.later.map((b) => b.child),
  ];
  for (const boot of boots) {
    if (classifyExit(boot.exited!).kind !== "won") wrong.push(`boot failed: ${boot.describe()}`);
  }
  return wrong;
}

/** Notes a scenario's figures and adds its kills, acknowledged and lost operations. */
function record(
  ctx: CellRun,
  s: Scenario,
  counted: { label: string; acknowledged: number; lost: number },
): void {
  const { label, acknowledged, lost } = counted;
  ctx.note(label, {
    arrivals: s.arrivals.length,
    states: s.reads[0].obligations.map((o) => o.state).join(" "),
    forced: { held: s.forced.held, heldOut: s.forced.heldOut, finished: s.forced.finished },
    booking: s.booking,
  });
  const kills = [
    s.sender,
    s.backlog.child,
    s.armed?.child,
    s.resumed.sender,
    s.restartedKilled && s.restarted,
  ]
    .filter((c) => c && classifyExit(c.exited!).kind === "killed").length;
  tally(ctx, "sigkills", kills);
  tally(ctx, "acknowledgedOps", acknowledged);
  tally(ctx, "lost", lost);
}

/** What {@linkcode judgeScenario} judges: a scenario, under a policy. */
export interface ScenarioJudged {
  /** The scenario run. */
  scenario: Scenario;
  /** The delivery policy judged. */
  choice: PolicyChoice;
  /** How many obligations the sender recorded. */
  obligations: number;
}

/**
 * Judges one scenario under `judged.choice`, one step per check: how its processes ended,
 * what reached the platform and how each obligation ended, the boots' claims, and the later
 * boots and the new life.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @param judged The scenario, the policy, the sender's obligations.
 * @example
 * ```ts ignore
 * const s = await runScenario(ctx, { kind, point, idempotent: false }, counts);
 * await judgeScenario(ctx, t, { scenario: s, choice, obligations: 5 });
 * ```
 */
export async function judgeScenario(
  ctx: CellRun,
  t: Deno.TestContext,
  judged: ScenarioJudged,
): Promise<void> {
  const { scenario: s, choice, obligations } = judged;
  const transport = s.idempotent ? "idempotent" : "non-idempotent";
  const label = `${s.kind.name} (${s.point}) · ${transport}`;
  const contentOf = idsToContents(s.reads[0]);
  const { sender, histories } = historiesOf(s, obligations, contentOf);
  const outbox = await judgeOutbox({
    target: ctx.target,
    db: s.db,
    arrivals: s.arrivals,
    idempotent: s.idempotent,
    policy: choice.policy,
    histories,
    live: LIVE,
    sender,
    reads: s.reads,
    sound: s.sound,
  });
  const resumed = await resumeChecks(s.resumed, {
    target: ctx.target,
    db: s.db,
    idempotent: s.idempotent,
    policy: choice.policy,
  });
  const held = new Set(s.reads[0].obligations.map((o) => o.content));
  record(ctx, s, {
    label,
    acknowledged: sender.acknowledgedRecorded + sender.acknowledgedDelivered +
      s.backlog.contents.length + 2 * LIVE.length + resumed.acknowledged,
    lost: outbox.lost + s.backlog.contents.filter((c) => !held.has(c)).length +
      s.takeoverLost.length + resumed.lost,
  });
  await processSteps(t, label, s);
  // What reached the platform and how each obligation ended come first; then how.
  await checkSteps(t, outbox.checks, `${label}: `);
  const owedAtKilledBoot = histories.filter((h) => h.kind !== "delivered").map((h) => h.content);
  await checkSteps(t, bootClaims(s, owedAtKilledBoot, contentOf), `${label}: `);
  await checkSteps(t, [laterBootsCheck(s, contentOf), ...resumed.checks], `${label}: `);
}

/**
 * How the scenario's processes went: every kill landed and every boot exited 0, the
 * restarted sender reached its last mark alive, the forced worst case's order shown.
 */
async function processSteps(t: Deno.TestContext, label: string, s: Scenario): Promise<void> {
  await t.step(`${label}: every kill landed, every boot exited 0`, () => {
    const wrong = endings(s);
    ok(wrong.length === 0, wrong.join("\n"));
  });
  await t.step(
    `${label}: the restarted sender was refused every settled obligation and kept its own`,
    () => {
      ok(
        s.restartedKilled,
        `the restarted sender did not reach its last acknowledged mark alive: ${s.restarted.describe()}`,
      );
    },
  );
  await t.step(
    `${label}: forced worst case: each sweeper held after its read until every other had read or was held out by its lock`,
    () => {
      // The order could not be shown (a lock the recorder does not see): the suite's failure.
      if (s.forced.unreached.length) {
        throw new HarnessError(`not reached by ${s.forced.unreached.join("; ")}`);
      }
    },
  );
}

/**
 * The boots' claims: the killed boot's sweep claimed exactly what it owed, the first clean
 * boot's concurrent sweeps disjointly exactly what it owed, an acknowledged sweep durable.
 */
function bootClaims(
  s: Scenario,
  owedAtKilledBoot: readonly string[],
  contentOf: (id: string) => string | undefined,
): StateCheck[] {
  return [
    ...(s.armed
      ? [
        claimsCheck(
          "the killed boot's sweep claimed exactly what was owed",
          [{ name: "killed boot", claims: s.armed.claims }],
          { owed: owedAtKilledBoot, contentOf },
        ),
      ]
      : []),
    claimsCheck(
      "the first clean boot's concurrent sweeps claimed disjoint sets, together exactly what was owed",
      s.racers,
      { owed: s.owed, contentOf },
    ),
    { name: "an acknowledged sweep is durable", violations: s.takeoverLost, missing: [] },
  ];
}

/** The two later boots claimed nothing and changed nothing. */
function laterBootsCheck(
  s: Scenario,
  contentOf: (id: string) => string | undefined,
): StateCheck {
  return {
    name: "two later boots claim nothing and change nothing",
    violations: s.later.flatMap((b) => [
      ...printedClaims(b.child).map((c) =>
        `${b.name} claimed "${contentOf(c.id) ?? c.id}" (${c.action})`
      ),
      ...b.changed.map((c) => `${b.name} changed ${c}`),
    ]),
    missing: [],
  };
}
