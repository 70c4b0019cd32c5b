// Cell 5's scenarios, the running half (outbox_exactly_once.ts judges): a sender killed at
// one kill point, a second process killed with a backlog of pending obligations across
// several sessions, maybe a boot killed right after its first redelivery, the application
// restarted beside the first clean boot (three or more sweepers, their order forced), two
// later boots, and a new life of the application on the recovered file.
import { readAckJournal } from "../../harness/ack_journal.ts";
import { countReady, releaseBarrier } from "../../harness/barrier.ts";
import { type Child, classifyExit, killWhileAlive, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import { untilExited } from "../moves/kill.ts";
import {
  type Arrival,
  readInbox,
  RECOVERER_AFTER_SEND,
  SENDER_AFTER_ATTEMPTING,
  SENDER_AFTER_RECORD,
  SENDER_AFTER_SEND,
} from "./inbox.ts";
import { type ForcedRace, raceForced, spawnSweepers } from "./forced.ts";
import { type LaterBoot, laterBoots, type ResumedLife, resumeLife } from "./boots.ts";
import { type RecoveredOutbox, recoverOutbox, senderAtKill } from "./state.ts";
import { obligationContent, writtenContent } from "./_content.ts";
import { soundness } from "../engine/state_check.ts";
import { openTargetStore } from "../contract/target.ts";
import { RECOVERER, RESTARTED_SENDER, SENDER } from "./_children.ts";
import { readReport } from "../../internal/report_line.ts";

/** A kill kind: where the sender dies, and whether a boot then dies inside its redelivery. */
export interface KillKind {
  name: string;
  /** The store's point, used when the target lists it. */
  point: string;
  /** The sender's own point right after the call returned (same state), else. */
  fallback?: string;
  /** A boot is killed right after its first send (`recoverer:afterSend`). */
  armed?: boolean;
}

/** The kill kinds, by what they leave behind. */
export const KILL_KINDS: readonly KillKind[] = [
  { name: "recorded-unsent", point: "recordObligation:afterCommit", fallback: SENDER_AFTER_RECORD },
  {
    name: "attempting-unsent",
    point: "markAttempting:afterCommit",
    fallback: SENDER_AFTER_ATTEMPTING,
  },
  { name: "sent-unacked", point: SENDER_AFTER_SEND },
  { name: "crash during resend", point: SENDER_AFTER_SEND, armed: true },
  {
    name: "boot killed in a plain redelivery",
    point: "recordObligation:afterCommit",
    fallback: SENDER_AFTER_RECORD,
    armed: true,
  },
];

/**
 * The backlog: a second process records one obligation more than the racers (`backlog <i>`,
 * across `sessions` sessions) and dies right after its last recording. With the sender's
 * two or more, the first clean boot owes at least racers + 3: more than it has sweepers and
 * more than a small per-call cap.
 */
export const BACKLOG = { prefix: "backlog", beyondRacers: 1, sessions: 3 } as const;

/** One claim of a sweep, as a recoverer prints or journals it. */
export interface Claim {
  id: string;
  action: string;
  state?: string;
  fence?: number;
  marker?: string | null;
}

/** A boot's sweep: who, and what it claimed. */
export interface BootSweep {
  name: string;
  child: Child;
  claims: Claim[];
}

/** The contents the restarted sender records and delivers itself. */
export const LIVE = [0, 1].map((i) => obligationContent("live effect", i));

/** What one scenario left, for the judge. */
export interface Scenario {
  kind: KillKind;
  /** The sender's point used. */
  point: string;
  idempotent: boolean;
  dir: string;
  db: string;
  inbox: string;
  sender: Child;
  /** The process killed with the backlog, and the backlog's contents. */
  backlog: { child: Child; contents: string[] };
  /** The boot killed inside its redelivery, its journalled claims, and its copies. */
  armed?: { child: Child; claims: Claim[]; sent: Arrival[] };
  /** What the killed boot's acknowledged sweep left that is not on disk. */
  takeoverLost: string[];
  restarted: Child;
  restartedKilled: boolean;
  /** The restarted sender's stale booking probe: exercised, or why not. */
  booking: string;
  /** Contents of the dead processes' open obligations as the first clean boot began. */
  owed: string[];
  racers: BootSweep[];
  forced: ForcedRace;
  arrivals: Arrival[];
  reads: [RecoveredOutbox, RecoveredOutbox];
  sound: string[];
  later: LaterBoot[];
  resumed: ResumedLife;
}

/** The claims a recoverer printed on its last line (none when it printed none). */
export function printedClaims(child: Child): Claim[] {
  return readReport<{ claims?: Claim[] }>(child.stdout)?.claims ?? [];
}

/**
 * What the killed boot's acknowledged sweep (its journal) returned that the file no
 * longer holds once it died: each obligation it took over and did not touch again (to
 * resend, or settled unknown) must keep the state and fence the sweep returned.
 */
async function lostTakeovers(target: string, db: string, claims: Claim[]): Promise<string[]> {
  const kept = claims.filter((a) => a.action !== "send");
  if (!kept.length) return [];
  const store = await openTargetStore(target, db);
  try {
    const stored = new Map((await store.listObligations!()).map((o) => [o.obligationId, o]));
    return kept.flatMap((a) => {
      const o = stored.get(a.id);
      return o && o.state === a.state && o.deliveryFence === a.fence ? [] : [
        `the sweep returned ${a.id} taken over (${a.action}: ${a.state}, fence ${a.fence}) and its process died after that acknowledgement; the file holds ${
          o ? `${o.state}, fence ${o.deliveryFence}` : "no such obligation"
        }`,
      ];
    });
  } finally {
    await store.close();
  }
}

/** The open obligations of the dead processes, by content (the live process's aside). */
async function openContents(target: string, db: string): Promise<string[]> {
  const store = await openTargetStore(target, db);
  try {
    // By what was recorded: a text the store changed is judged by the state checks.
    return (await store.listObligations!())
      .filter((o) => o.state === "pending" || o.state === "attempting")
      .map((o) => writtenContent(o.content).content)
      .filter((content) => !LIVE.includes(content)).sort();
  } finally {
    await store.close();
  }
}

/**
 * The backlog's process, started at once: it opens the store and waits for `barrier`
 * (released once the sender died, so that its obligations come after the sender's), then
 * records `count` obligations across the backlog's sessions and is killed right after its
 * last recording was acknowledged (all of them pending, owed).
 */
function startBacklog(
  ctx: CellRun,
  s: Pick<Scenario, "db" | "inbox">,
  plan: { count: number; barrier: string },
): Child {
  return ctx.spawn(SENDER, [
    s.db,
    s.inbox,
    String(plan.count),
    "-",
    "1",
    BACKLOG.prefix,
    String(BACKLOG.sessions),
    plan.barrier,
  ], { env: { SESSION_DB_CRASH_AT: `${SENDER_AFTER_RECORD}@${plan.count}` } });
}

/** Lets the backlog's process record, and waits for it to be killed. */
async function leaveBacklog(
  ctx: CellRun,
  s: Pick<Scenario, "db" | "idempotent">,
  started: { child: Child; count: number; barrier: string },
): Promise<Scenario["backlog"]> {
  const { child, count, barrier } = started;
  releaseBarrier(barrier);
  await untilExited(child, `the backlog's process to reach ${SENDER_AFTER_RECORD}`);
  if (classifyExit(child.exited!).kind === "killed") {
    const mode = s.idempotent ? "idempotent" : "plain";
    ctx.observeLeg(s.db, `backlog: ${SENDER_AFTER_RECORD} (${mode})`, true);
  }
  const contents = Array.from({ length: count }, (_, i) => obligationContent(BACKLOG.prefix, i));
  return { child, contents };
}

/** The sender, the backlog, then the boot killed inside its redelivery when the kind has one. */
async function crash(
  ctx: CellRun,
  s: Pick<Scenario, "kind" | "point" | "idempotent" | "dir" | "db" | "inbox">,
  counts: ScenarioCounts,
): Promise<Pick<Scenario, "sender" | "backlog" | "armed" | "takeoverLost">> {
  const obligations = counts.obligations;
  // Started beside the sender, so that its start-up overlaps the sender's run.
  const count = counts.recoverers + BACKLOG.beyondRacers;
  const barrier = `${s.dir}/backlog-go`;
  const backlogChild = startBacklog(ctx, s, { count, barrier });
  const mode = s.idempotent ? "idempotent" : "plain";
  const sender = ctx.spawn(SENDER, [
    s.db,
    s.inbox,
    String(obligations),
    `${s.dir}/sender-acks.jsonl`,
  ], {
    env: { SESSION_DB_CRASH_AT: `${s.point}@3` },
  });
  await untilExited(sender, `the sender to reach crash point ${s.point}`);
  // Every sender kill point lies between transactions (after a COMMIT or a send).
  if (classifyExit(sender.exited!).kind === "killed") {
    ctx.observeLeg(s.db, `${s.point} (${mode})`, true);
  }
  // Recorded after the sender's: a boot that goes by age redelivers the sender's first, so
  // the killed boot's first send is still the one its kind is about.
  const backlog = await leaveBacklog(ctx, s, { child: backlogChild, count, barrier });
  if (!s.kind.armed) return { sender, backlog, takeoverLost: [] };
  const journal = `${s.dir}/armed-acks.jsonl`;
  const child = ctx.spawn(RECOVERER, [
    s.db,
    s.inbox,
    s.dir,
    "armed",
    "-",
    s.idempotent ? "1" : "0",
    journal,
  ], {
    env: { SESSION_DB_CRASH_AT: RECOVERER_AFTER_SEND },
  });
  await untilExited(child, `the killed boot to reach ${RECOVERER_AFTER_SEND}`);
  const claims = exists(journal) ? readAckJournal<Claim>(journal) : [];
  let takeoverLost: string[] = [];
  if (classifyExit(child.exited!).kind === "killed") {
    // Not quiescent: a store that acknowledges its sweep before COMMIT dies inside it.
    ctx.observeLeg(s.db, `${RECOVERER_AFTER_SEND} (${mode})`);
    takeoverLost = await lostTakeovers(ctx.target, s.db, claims);
  }
  const sent = readInbox(s.inbox).filter((a) => a.pid === child.pid);
  return { sender, backlog, armed: { child, claims, sent }, takeoverLost };
}

/** The scenario's files and settings. */
type Base = Pick<Scenario, "kind" | "point" | "idempotent" | "dir" | "db" | "inbox">;

/** Which scenario {@linkcode runScenario} runs: the kill kind, its point, the transport. */
export type ScenarioKind = Pick<Scenario, "kind" | "point" | "idempotent">;

/** How many obligations the sender records, and how many sweepers the first clean boot runs. */
export interface ScenarioCounts {
  obligations: number;
  recoverers: number;
}

/**
 * The first clean boot: the restarted application (alive throughout, its refusals probed
 * before the sweepers go) beside the sweepers under the forced worst case; then the
 * restarted application's late sweep and its last acknowledged mark, SIGKILLed.
 */
async function firstCleanBoot(
  ctx: CellRun,
  base: Base & Pick<Scenario, "armed">,
  options: ScenarioCounts,
): Promise<
  Pick<Scenario, "restarted" | "restartedKilled" | "booking" | "owed" | "racers" | "forced">
> {
  const { dir, db, inbox } = base;
  const flag = base.idempotent ? "1" : "0";
  // After a boot killed in a resend it books the dead sender's send, taken over by then.
  const restarted = ctx.spawn(RESTARTED_SENDER, [
    db,
    inbox,
    dir,
    String(senderAtKill(base.point, options.obligations).recorded),
    `${dir}/sender-acks.jsonl`,
    base.armed && base.kind.point === SENDER_AFTER_SEND ? `${dir}/armed-acks.jsonl` : "-",
    flag,
  ]);
  const barrier = `${dir}/go`;
  const sweepers = await spawnSweepers(ctx, {
    dir,
    dbDir: `${dir}/db`,
    count: options.recoverers,
    args: (name) => [db, inbox, dir, name, barrier, flag],
  });
  try {
    await waitFor(
      () => countReady(dir) >= options.recoverers && exists(`${dir}/restarted-ready`),
      {
        what: `${options.recoverers} recoverers and the restarted sender ready`,
        deadlineMs: 30_000,
        children: [...sweepers.children, restarted],
        observed: () => `${countReady(dir)} recoverers ready`,
      },
    );
    // What the boot owes, read once everything before it happened and before it starts.
    const owed = await openContents(ctx.target, db);
    const forced = await raceForced(sweepers, barrier);
    const racers = sweepers.children.map((child, i) => ({
      name: `r${i}`,
      child,
      claims: printedClaims(child),
    }));
    releaseBarrier(`${dir}/go-late`);
    await waitFor(() => exists(`${dir}/restarted-acked`) || restarted.exited !== undefined, {
      what: "the restarted sender to acknowledge its last delivery",
      deadlineMs: 30_000,
    });
    const restartedKilled = restarted.exited === undefined;
    if (restartedKilled) {
      await killWhileAlive(restarted);
      // Not quiescent: a store that acknowledges before COMMIT dies inside a transaction.
      ctx.observeLeg(
        db,
        `restarted sender after its last mark (${base.idempotent ? "idempotent" : "plain"})`,
      );
    }
    const { booking } = JSON.parse(Deno.readTextFileSync(`${dir}/restarted-ready`)) as {
      booking: string;
    };
    return { restarted, restartedKilled, booking, owed, racers, forced };
  } finally {
    await reapAll([...sweepers.children, restarted]);
  }
}

/**
 * Runs one scenario: the crash, then the first clean boot beside the restarted
 * application, then two later boots and a new life, each on the file the one before left.
 *
 * @example
 * ```ts ignore
 * const s = await runScenario(ctx, { kind: KILL_KINDS[0]!, point, idempotent: false }, {
 *   obligations: 5,
 *   recoverers: 3,
 * });
 * ```
 */
export async function runScenario(
  ctx: CellRun,
  which: ScenarioKind,
  counts: ScenarioCounts,
): Promise<Scenario> {
  const { kind, idempotent } = which;
  const dir = ctx.run.file(
    `${kind.name.replace(/\W+/g, "_")}-${idempotent ? "idempotent" : "plain"}`,
  );
  await Deno.mkdir(`${dir}/db`, { recursive: true });
  const base: Base = {
    ...which,
    dir,
    db: `${dir}/db/store.db`,
    inbox: `${dir}/inbox.jsonl`,
  };
  const crashed = await crash(ctx, base, counts);
  const booted = await firstCleanBoot(ctx, { ...base, ...crashed }, counts);
  const arrivals = readInbox(base.inbox);
  const reads: [RecoveredOutbox, RecoveredOutbox] = [
    await recoverOutbox(ctx.target, base.db),
    await recoverOutbox(ctx.target, base.db),
  ];
  // Judged as read, before the later boots and the new life reopen the file.
  const sound = soundness(base.db, reads, reads[0].invariants);
  const later = await laterBoots(ctx, base);
  const resumed = await resumeLife(ctx, base);
  return { ...base, ...crashed, ...booted, arrivals, reads, sound, later, resumed };
}
