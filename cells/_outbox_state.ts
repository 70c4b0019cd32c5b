// Clause 5's reader and judge, shared by the SIGKILL cell (outbox_exactly_once.ts) and the
// power-loss cell (power_loss_outbox_exactly_once.ts): after recoverers caught up, each
// effect reached the receiver at most once (exactly once with the idempotent transport),
// and no obligation was silently lost.
import {
  type Arrival,
  effectsPerObligation,
  RECOVERER_AFTER_SEND,
  SENDER_AFTER_RECORD,
} from "./_inbox.ts";
import { soundness, type StateCheck, type StateJudgement } from "./_state_check.ts";
import { openTargetStore, type Store, type StoredObligation } from "./target.ts";

/**
 * One obligation as the store reads it back: through `getObligation` when the store has
 * it, else found in `listObligations`.
 */
export async function readObligation(
  store: Store,
  id: string,
): Promise<StoredObligation | undefined> {
  return store.getObligation
    ? await store.getObligation(id)
    : (await store.listObligations!()).find((o) => o.obligationId === id);
}

/**
 * What a store's outbox holds after a crash: every obligation, sorted by content, and
 * the store's invariant violations. Opens the store through the target and closes it.
 *
 * @example
 * ```ts
 * import { recoverOutbox } from "./outbox_exactly_once.ts";
 * const target = new URL("./reference_target.ts", import.meta.url).href;
 * const path = `${Deno.makeTempDirSync()}/s.db`; // the file a killed sender left
 * const { obligations, invariants } = await recoverOutbox(target, path);
 * console.log(obligations.length, invariants); // 0 []
 * ```
 */
export async function recoverOutbox(target: string, db: string): Promise<RecoveredOutbox> {
  const store = await openTargetStore(target, db);
  try {
    const obligations = (await store.listObligations!()).map((o) => ({
      obligationId: o.obligationId,
      content: o.content,
      state: o.state,
      lastError: o.lastError ?? null,
    })).sort((a, b) => a.content.localeCompare(b.content));
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { obligations, invariants };
  } finally {
    await store.close();
  }
}

/**
 * The outbox of a store after a crash, as {@linkcode recoverOutbox} reads it.
 *
 * @example
 * ```ts
 * import type { RecoveredOutbox } from "./outbox_exactly_once.ts";
 * const empty: RecoveredOutbox = { obligations: [], invariants: [] };
 * console.log(empty.obligations.length); // 0
 * ```
 */
export interface RecoveredOutbox {
  /** Every obligation, sorted by content. */
  obligations: (Pick<StoredObligation, "obligationId" | "content" | "state"> & {
    lastError: string | null;
  })[];
  /** The store's invariant violations (empty when it has no `checkInvariants`). */
  invariants: string[];
}

const STATES = ["pending", "attempting", "delivered", "failed", "unknown"];

/** What the sender (`children/sender.ts`) had done when it died at its third obligation. */
export interface SenderAtKill {
  /** Obligations recorded (committed), the one in flight included. */
  recorded: number;
  /** Recordings acknowledged: all but the one in flight at `recordObligation:afterCommit`. */
  acknowledgedRecorded: number;
  /** Deliveries acknowledged: the two before the third, once past the recordings. */
  acknowledgedDelivered: number;
  /**
   * The obligations no process had attempted before recovery (pending orphans): nothing
   * can have been sent for them, so recovery must deliver each. In a crash during a
   * resend the killed recoverer may have taken them all: none is sure to be pending.
   */
  neverAttempted: readonly string[];
}

/** The index of the obligation in flight when the sender died (the third). */
const IN_FLIGHT = 2;

/** What the sender of `obligations` had done when it died at `point` at its third one. */
export function senderAtKill(point: string, obligations: number): SenderAtKill {
  const effects = (from: number, to: number) =>
    Array.from({ length: Math.max(0, to - from) }, (_, i) => `effect ${from + i}`);
  if (point === "recordObligation:afterCommit" || point === SENDER_AFTER_RECORD) {
    const acknowledged = point === SENDER_AFTER_RECORD ? IN_FLIGHT + 1 : IN_FLIGHT;
    return {
      recorded: IN_FLIGHT + 1,
      acknowledgedRecorded: acknowledged,
      acknowledgedDelivered: 0,
      neverAttempted: effects(0, IN_FLIGHT + 1),
    };
  }
  return {
    recorded: obligations,
    acknowledgedRecorded: obligations,
    acknowledgedDelivered: IN_FLIGHT,
    neverAttempted: point === RECOVERER_AFTER_SEND ? [] : effects(IN_FLIGHT + 1, obligations),
  };
}

/**
 * Acknowledged recordings absent and acknowledged deliveries not delivered: the sender's,
 * and those of `live` (contents a live process recorded and was acknowledged delivered).
 */
export function missingAcknowledged(
  recovered: RecoveredOutbox,
  sender: SenderAtKill,
  live: readonly string[] = [],
): number {
  const byContent = new Map(recovered.obligations.map((o) => [o.content, o]));
  let lost = 0;
  for (let i = 0; i < sender.acknowledgedRecorded; i++) {
    if (!byContent.has(`effect ${i}`)) lost++;
  }
  for (let i = 0; i < sender.acknowledgedDelivered; i++) {
    if (byContent.get(`effect ${i}`)?.state !== "delivered") lost++;
  }
  return lost + live.filter((c) => byContent.get(c)?.state !== "delivered").length;
}

/** What {@linkcode judgeOutbox} judges: a file and its receiver after recoverers ran. */
export interface OutboxCase {
  target: string;
  db: string;
  /** What the receiver got. */
  arrivals: Arrival[];
  /** Whether the transport deduplicates by key. */
  idempotent: boolean;
  /** The sender at its death. */
  sender: SenderAtKill;
  /** Fewest obligations the file may hold (a power loss may drop an unacknowledged one). */
  fewest: number;
  /** Contents of obligations a live process recorded and was acknowledged delivered. */
  live?: readonly string[];
}

/** Clause 5's verdict on one recovered file. */
export interface OutboxJudgement extends StateJudgement {
  /** The recovered outbox (first pass). */
  outbox: RecoveredOutbox;
}

/**
 * Reads the outbox twice through the target and judges it with the receiver's arrivals:
 * each effect at most once (exactly once, every obligation delivered, with the
 * idempotent transport); no obligation silently lost (each delivered and received, or
 * unknown/failed with a reason), none unrecorded received; states valid, two passes
 * identical, `integrity_check` ok, the store's invariants.
 */
export async function judgeOutbox(c: OutboxCase): Promise<OutboxJudgement> {
  const first = await recoverOutbox(c.target, c.db);
  const second = await recoverOutbox(c.target, c.db);
  const effects = effectsPerObligation(c.arrivals, c.idempotent);
  const seen = (id: string) => effects.get(id) ?? 0;
  const once: string[] = [];
  for (const o of first.obligations) {
    const n = seen(o.obligationId);
    if (c.idempotent) {
      if (n !== 1) once.push(`${o.content} (${o.obligationId}) observed ${n} time(s) after dedupe`);
      if (o.state !== "delivered") once.push(`${o.content} ended ${o.state}: ${o.lastError}`);
    } else if (n > 1) {
      once.push(
        `${o.content} (${o.obligationId}) observed ${n} times by the non-idempotent receiver (pids ${
          c.arrivals.filter((a) => a.obligationId === o.obligationId).map((a) => a.pid).join(", ")
        })`,
      );
    }
  }
  const silently: string[] = [];
  const live = c.live ?? [];
  const count = first.obligations.length;
  const [fewest, most] = [c.fewest + live.length, c.sender.recorded + live.length];
  if (count < fewest || count > most) {
    silently.push(
      `${count} obligations recorded, expected ${fewest === most ? fewest : `${fewest}..${most}`}`,
    );
  }
  const known = new Set(first.obligations.map((o) => o.obligationId));
  const stray = c.arrivals.filter((a) => !known.has(a.obligationId));
  if (stray.length) silently.push(`effects of unrecorded obligations: ${JSON.stringify(stray[0])}`);
  let dropped = 0;
  const pending = new Set(c.sender.neverAttempted);
  for (const o of first.obligations) {
    if (live.includes(o.content) && o.state !== "delivered") {
      dropped++;
      silently.push(
        `${o.content} was acknowledged delivered to its live owner, which was then killed; it ended ${o.state} (${
          JSON.stringify(o.lastError)
        })`,
      );
      continue;
    }
    if (pending.has(o.content) && o.state !== "delivered") {
      dropped++;
      silently.push(
        `${o.content} was never attempted before the crash (a pending orphan), so recovery must deliver it; it ended ${o.state} (${
          JSON.stringify(o.lastError)
        })`,
      );
      continue;
    }
    if (
      o.state === "delivered" ? seen(o.obligationId) >= 1 : (
        (o.state === "unknown" || o.state === "failed") && !!o.lastError?.trim()
      )
    ) continue;
    dropped++;
    silently.push(
      o.state === "delivered"
        ? `${o.content} marked delivered, never received`
        : `${o.content} left ${o.state} without a reason (${JSON.stringify(o.lastError)})`,
    );
  }
  const invalid = first.obligations.filter((o) => !STATES.includes(o.state));
  const checks: StateCheck[] = [
    {
      name: c.idempotent
        ? "each effect delivered exactly once"
        : "each effect observed at most once",
      violations: once,
      missing: [],
    },
    { name: "no obligation silently lost", violations: silently, missing: [] },
    {
      name: "outbox states valid, recovery deterministic, invariants",
      violations: [
        ...(invalid.length ? [`invalid states: ${JSON.stringify(invalid)}`] : []),
        ...soundness(c.db, first, second, first.invariants),
      ],
      missing: [],
    },
  ];
  return { outbox: first, checks, lost: missingAcknowledged(first, c.sender, live) + dropped };
}
