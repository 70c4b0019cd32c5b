import { dirname, join } from "node:path";
import { copyTree } from "../../internal/fs.ts";
import { countReady, releaseBarrier } from "../../harness/barrier.ts";
import { type Child, classifyExit, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { readInbox, SENDER_AFTER_SEND } from "./inbox.ts";
import {
  choosePolicy,
  declaredPolicy,
  describeHistory,
  type ObligationHistory,
} from "./delivery_policy.ts";
import { type LifeRunner, resumeLife } from "./boots.ts";
import { claimsCheck, resumeChecks } from "./judge.ts";
import { type Claim, printedClaims } from "./scenario.ts";
import {
  contentsKept,
  judgeOutbox,
  missingAcknowledged,
  type RecoveredOutbox,
  recoverOutbox,
  type SenderAck,
  type SenderAtInstant,
  senderFromAcks,
  storedState,
} from "./state.ts";
import {
  checkStates,
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
  recordAndKill,
  runFiles,
} from "../power_loss/record.ts";
import { powerLossCell, powerLossSteps } from "../power_loss/steps.ts";
import {
  soundness,
  type StateCheck,
  type StateJudgement,
  violationsOf,
} from "../engine/state_check.ts";
import { seededRandom } from "../../harness/seeded_random.ts";
import { type DeliveryPolicy, loadTarget } from "../contract/target.ts";
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
  /** Recoverers racing on each raced state (default 3). */
  recoverers?: number;
  /**
   * Sound crash states (distinct acknowledgements and obligations) the recoverers race on
   * and a new life continues: the kill's, and others drawn with the run's seed (default 3).
   */
  racedStates?: number;
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
        join(dir, "db", "store.db"),
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

/** A sound crash state kept for the recoverers: its recovered files and the lines before it. */
interface RaceCandidate {
  /** What it holds: the acknowledgements before it and each obligation's state and fence. */
  signature: string;
  /** The folder holding its recovered files. */
  dir: string;
  /** The sender's journal lines before its instant. */
  lines: readonly string[];
}

/** A run's judging: its options, and the distinct sound states kept for the recoverers. */
interface OutboxJudging {
  options: PowerLossOutboxRunOptions;
  obligations: number;
  candidates: RaceCandidate[];
}

/**
 * The sender's obligations as a state holds them, against what its journal lines before
 * the instant acknowledged: each where its last line put it, except the one its next
 * store call writes, which may be one step ahead (committed, not yet acknowledged: a
 * recording present, an attempt or a delivery committed); nothing else.
 */
function placedHistories(
  sender: SenderAtInstant,
  before: RecoveredOutbox,
): { histories: ObligationHistory[]; optional: string[]; check: StateCheck } {
  const stored = new Map(before.obligations.map((o) => [o.content, o.state]));
  const { next } = sender;
  const histories = sender.histories.map((h): ObligationHistory =>
    next && next.from !== "absent" && h.content === next.content &&
      stored.get(h.content) === storedState(next.to)
      ? { ...h, kind: next.to }
      : h
  );
  const optional = next?.from === "absent" ? [next.content] : [];
  const violations: string[] = [];
  for (const h of histories) {
    const state = stored.get(h.content);
    if (state === storedState(h.kind) || (state === undefined && optional.includes(h.content))) {
      continue;
    }
    const step = next?.content === h.content ? `, or ${storedState(next.to)} one step ahead` : "";
    violations.push(
      `${describeHistory(h)} reads ${state ?? "absent"}: the sender's acknowledgements put it ${
        storedState(h.kind)
      }${step}`,
    );
  }
  for (const o of before.obligations) {
    if (!histories.some((h) => h.content === o.content)) {
      violations.push(
        `the file holds ${
          JSON.stringify(o.content)
        } (${o.obligationId}), which the sender never recorded`,
      );
    }
  }
  return {
    histories,
    optional,
    check: {
      name: "each obligation is where the sender's acknowledgements put it, or one step ahead",
      violations,
      missing: [],
    },
  };
}

/** The inbox as the instant saw it: the sends journaled before it (no watched call between). */
function inboxAt(inbox: string, sent: ReadonlySet<string>, to: string): void {
  const lines = Deno.readTextFileSync(inbox).split("\n").filter((line) =>
    line !== "" && sent.has((JSON.parse(line) as { obligationId: string }).obligationId)
  );
  Deno.writeTextFileSync(to, lines.map((line) => `${line}\n`).join(""));
}

/**
 * Judges one crash state of cell 5 in-process, against the sender's journal lines before
 * its instant: acknowledged recordings present and acknowledged deliveries delivered
 * (`lost`), each obligation where the acknowledgements put it or one step ahead, two
 * reads identical, `integrity_check` ok, the store's invariants. A sound state not seen
 * before (same acknowledgements, same obligations) is kept for the recoverers.
 */
async function judgeOutboxState(
  judging: OutboxJudging,
  db: string,
  lines: readonly string[],
): Promise<StateJudgement> {
  const { options, obligations } = judging;
  const sender = senderFromAcks(parseAcks<SenderAck>(lines), obligations);
  const before = await recoverOutbox(options.target, db);
  const again = await recoverOutbox(options.target, db);
  const placed = placedHistories(sender, before);
  const checks: StateCheck[] = [contentsKept(before), placed.check, {
    name: "recovery deterministic, integrity, invariants",
    violations: soundness(db, [before, again], before.invariants),
    missing: [],
  }];
  const lost = missingAcknowledged(before, sender);
  const signature = `${lines.length} acknowledged: ${
    before.obligations.map((o) => `${o.content} ${o.state}@${o.deliveryFence}`).join(", ")
  }`;
  const sound = lost === 0 && checks.every((c) => c.violations.length === 0);
  if (sound && !judging.candidates.some((c) => c.signature === signature)) {
    const dir = join(options.dir, "raced", String(judging.candidates.length));
    Deno.mkdirSync(dir, { recursive: true });
    copyTree(dirname(db), join(dir, "db"));
    judging.candidates.push({ signature, dir, lines });
  }
  return { lost, checks };
}

/**
 * Races recoverers on a kept state, once per transport on its own copy (the state and the
 * inbox as its instant saw it), then the SIGKILL cell 5's judge rules under the delivery
 * policy (the declared one, else the one the plain copy's sweeps imply): exact copies per
 * obligation (once after dedupe with the idempotent transport), the recorded content,
 * terminal states, none silently lost, states valid, recovery deterministic, integrity and
 * invariants; their claims disjoint and exactly what the state owed. Then a new life on
 * the recovered copy: new obligations, killed sent-unacked, one more boot, and both lives
 * judged.
 */
async function raceState(
  judging: OutboxJudging,
  declared: DeliveryPolicy | undefined,
  state: RaceCandidate,
  inbox: string,
): Promise<StateCheck[]> {
  const { options } = judging;
  const sender = senderFromAcks(parseAcks<SenderAck>(state.lines), judging.obligations);
  const before = await recoverOutbox(options.target, join(state.dir, "db", "store.db"));
  const { histories, optional } = placedHistories(sender, before);
  const owed = before.obligations.filter((o) => o.state === "pending" || o.state === "attempting")
    .map((o) => o.content).sort();
  const maybeSent = new Set(
    before.obligations.filter((o) => o.state === "attempting").map((o) => o.obligationId),
  );
  const checks: StateCheck[] = [];
  let policy = declared;
  for (const idempotent of [false, true]) {
    const label = idempotent ? "idempotent" : "non-idempotent";
    const dir = join(state.dir, label);
    // The store's folder holds its files alone; the inbox and the recoverers' reports
    // are beside it.
    copyTree(join(state.dir, "db"), join(dir, "db"));
    inboxAt(inbox, sender.sent, join(dir, "inbox.jsonl"));
    const raced = await raceRecoverers(options, dir, idempotent);
    policy ??= choosePolicy(
      undefined,
      raced.sweeps.flatMap((s) =>
        s.claims.map((c) => ({ action: c.action, maybeSent: maybeSent.has(c.id) }))
      ),
    ).policy;
    const copy = join(dir, "db", "store.db");
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
  return checks;
}

/** The kept states the recoverers race on: the first (the kill's), and others by the seed. */
function racedSample(candidates: readonly RaceCandidate[], seed: number, count: number) {
  const random = seededRandom(seed);
  const rest = candidates.slice(1).map((c) => ({ c, key: random() }))
    .sort((a, b) => a.key - b.key).map(({ c }) => c);
  return [...candidates.slice(0, 1), ...rest].slice(0, Math.max(0, count));
}

/**
 * One recorded run of cell 5's sender: it records `obligations` obligations under the
 * file-system call recorder, then marks each attempting, sends it (to the inbox, the fake
 * transport, outside the database's folder: what the receiver got survives the power
 * loss) and marks it delivered, journaling each acknowledged call into the run's
 * acknowledgement journal (the recorder's mark file), and dies at `point` at its third
 * obligation. Every crash state is judged against the lines before its instant
 * (`judgeOutboxState`); then on a sample of the sound ones (`racedStates`), for each
 * transport on its own copy, recoverers race `sweepRecoverable` and redeliver, and a new
 * life continues (`raceState`): a failure there counts its state inconsistent.
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
 * console.log(run.losingStates, run.corruptStates, run.raced, run.firstProblem ?? "no problem");
 * ```
 */
export async function powerLossOutboxRun(
  options: PowerLossOutboxRunOptions,
): Promise<PowerLossRun & { raced: { kept: number; run: number } }> {
  const run = { ...options, kill: "ack" as const, minAcknowledged: 0 };
  const files = runFiles(run.dir);
  const inbox = join(run.dir, "inbox.jsonl");
  const obligations = run.obligations ?? 5;
  await recordAndKill(run, files, {
    script: SENDER,
    args: [files.db, inbox, String(obligations), files.acks],
    what: `obligations (dies at ${run.point}@3)`,
    env: { SESSION_DB_CRASH_AT: `${run.point}@3` },
  });
  for (const file of [inbox, files.acks]) {
    Deno.writeFileSync(file, new Uint8Array(), { append: true });
  }
  const judging: OutboxJudging = { options: run, obligations, candidates: [] };
  const checked = await checkStates(run, files, {
    judge: (db, lines) => judgeOutboxState(judging, db, lines),
    // Recordings and deliveries are the operations; attempts and sends are steps between.
    acknowledged: (lines) =>
      parseAcks<SenderAck>(lines).filter((a) => a.op === "recorded" || a.op === "delivered")
        .length,
  });
  const declared = await declaredPolicy(run.target);
  const sample = racedSample(judging.candidates, checked.seed, run.racedStates ?? 3);
  for (const state of sample) {
    const problems = violationsOf(await raceState(judging, declared, state, inbox));
    if (problems.length === 0) continue;
    checked.corruptStates++;
    checked.firstProblem ??= `raced state (${state.signature}): ${problems[0]}`;
  }
  return { ...checked, raced: { kept: judging.candidates.length, run: sample.length } };
}

/**
 * Cell 5 in the power-loss tier: the sender runs under the recorder, journaling each
 * acknowledged call, and dies at its third obligation at each kill point
 * (recorded-unsent, attempting-unsent, sent-unacked; the store's points when the target
 * lists them). Every crash state is judged against the acknowledgements before its
 * instant: every acknowledged recording and delivery is in it, each obligation is where
 * they put it (the call in flight may be one step ahead), recovery deterministic,
 * integrity and invariants. On a sample of the sound states, for each transport on its
 * own copy with the inbox as the instant saw it, recoverers race `sweepRecoverable` and
 * redeliver: each effect is observed at most once (exactly once with the idempotent
 * transport), no obligation is silently lost, and a new life continues. The receiver's
 * inbox is outside the power loss (the provider got it).
 *
 * @param options Target, leg, states, obligation and recoverer counts, raced states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossOutboxCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossOutboxCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossOutboxCell(
  options: PowerLossOptions & { obligations?: number; recoverers?: number; racedStates?: number },
): Promise<Deno.TestDefinition[]> {
  return powerLossCell({
    id: 5,
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
          progress: ctx.progress,
        });
        ctx.note(`${point} raced`, run.raced);
        await powerLossSteps(ctx, t, { what: "operations", run, label: point });
      }
    },
  }, options);
}
