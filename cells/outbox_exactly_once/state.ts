// Clause 5's reader and judge, shared by the SIGKILL cell (outbox_exactly_once.ts) and the
// power-loss cell (power_loss_outbox_exactly_once.ts): after a clean boot, each obligation
// reached the platform with exactly the copies its delivery policy promises (exactly once
// after dedupe with the idempotent transport), each copy carrying what was recorded, every
// obligation ended terminal, every recovery marker visible, and none was silently lost.
import { type Arrival, effectsPerObligation, SENDER_AFTER_RECORD } from "./inbox.ts";
import {
  copiesGap,
  describeHistory,
  expectedCopies,
  type ObligationHistory,
  type ObligationKind,
  terminalStates,
} from "./delivery_policy.ts";
import { soundness, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import type { DeliveryPolicy, Store, StoredObligation } from "../contract/target.ts";
import { invariantsOf, withStore } from "../contract/with_store.ts";
import { contentChange, obligationContent, shownContent, writtenContent } from "./_content.ts";

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
 * the store's invariant violations. Each obligation's `content` is what the application
 * recorded for the obligation its stored content names (`effect 5` and its text), and
 * `stored` what the store holds when that differs (cut, trimmed, or recorded plain after a
 * typed refusal). Opens the store through the target and closes it.
 *
 * @example
 * ```ts
 * import { recoverOutbox } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url).href;
 * const path = `${Deno.makeTempDirSync()}/s.db`; // the file a killed sender left
 * const { obligations, invariants } = await recoverOutbox(target, path);
 * console.log(obligations.length, invariants); // 0 []
 * ```
 */
export function recoverOutbox(target: string, db: string): Promise<RecoveredOutbox> {
  return withStore(target, db, async (store) => {
    const obligations = (await store.listObligations!()).map((o) => {
      const { content } = writtenContent(o.content);
      return {
        obligationId: o.obligationId,
        content,
        ...(content === o.content ? {} : { stored: o.content }),
        state: o.state,
        deliveryFence: o.deliveryFence,
        lastError: o.lastError ?? null,
      };
    }).sort((a, b) => a.content.localeCompare(b.content));
    return { obligations, invariants: await invariantsOf(store) };
  });
}

/**
 * The outbox of a store after a crash, as {@linkcode recoverOutbox} reads it.
 *
 * @example
 * ```ts
 * import type { RecoveredOutbox } from "./cell.ts";
 * const empty: RecoveredOutbox = { obligations: [], invariants: [] };
 * console.log(empty.obligations.length); // 0
 * ```
 */
export interface RecoveredOutbox {
  /** Every obligation, sorted by content (what the application recorded). */
  obligations: (Pick<StoredObligation, "obligationId" | "content" | "state" | "deliveryFence"> & {
    /** What the store holds, when it is not `content`. */
    stored?: string;
    lastError: string | null;
  })[];
  /** The store's invariant violations (empty when it has no `checkInvariants`). */
  invariants: string[];
}

const STATES = ["pending", "attempting", "delivered", "failed", "unknown", "abandoned"];

/** What the sender (`children/sender.ts`) had done when it died at its third obligation. */
export interface SenderAtKill {
  /** Obligations recorded (committed), the one in flight included. */
  recorded: number;
  /** Recordings acknowledged: all but the one in flight at `recordObligation:afterCommit`. */
  acknowledgedRecorded: number;
  /** Deliveries acknowledged: the two before the third, once past the recordings. */
  acknowledgedDelivered: number;
  /** Each obligation it recorded, by where it died (`effect <i>`). */
  histories: ObligationHistory[];
}

/** The index of the obligation in flight when the sender died (the third). */
const IN_FLIGHT = 2;

/** Whether the sender dies right after a recording (its own point or the store's). */
export function diesRecording(point: string): boolean {
  return point === "recordObligation:afterCommit" || point === SENDER_AFTER_RECORD;
}

/** Which sender's life {@linkcode senderAtKill} reads: its contents and where it died. */
export interface SenderLife {
  /** The contents' prefix (`<prefix> <i>`; default `effect`). */
  prefix?: string;
  /** The obligation it died at (0-based; default the third). */
  at?: number;
}

/**
 * What the sender of `obligations` (contents `<prefix> <i>`) had done when it died at
 * `point` at obligation `at`: the obligations before it delivered, it attempting or sent,
 * the rest pending; at a recording, the recorded ones pending.
 *
 * @example
 * ```ts ignore
 * const sender = senderAtKill("sender:afterSend", 5);
 * console.log(sender.histories.map((h) => h.kind)); // delivered ×2, sent, pending ×2
 * ```
 */
export function senderAtKill(
  point: string,
  obligations: number,
  life: SenderLife = {},
): SenderAtKill {
  const { prefix = "effect", at = IN_FLIGHT } = life;
  const history = (i: number, kind: ObligationKind) => ({
    content: obligationContent(prefix, i),
    kind,
  });
  if (diesRecording(point)) {
    return {
      recorded: at + 1,
      acknowledgedRecorded: point === SENDER_AFTER_RECORD ? at + 1 : at,
      acknowledgedDelivered: 0,
      histories: Array.from({ length: at + 1 }, (_, i) => history(i, "pending")),
    };
  }
  const inFlight: ObligationKind = /[aA]ttempting/.test(point) ? "attempting" : "sent";
  return {
    recorded: obligations,
    acknowledgedRecorded: obligations,
    acknowledgedDelivered: at,
    histories: Array.from(
      { length: obligations },
      (_, i) => history(i, i < at ? "delivered" : i === at ? inFlight : "pending"),
    ),
  };
}

/** One line of the sender's journal (`children/sender.ts`), written after the store returned. */
export interface SenderAck {
  /** The acknowledged call: a recording, an attempt, a send, a delivery. */
  op: "recorded" | "attempting" | "sent" | "delivered";
  /** The obligation. */
  id: string;
  /** Its content (on `recorded`). */
  content?: string;
  /** The attempt's fence (on `attempting` and `sent`). */
  fence?: number;
}

/**
 * The store state an obligation of this history reads back (sent is still attempting).
 *
 * @example
 * ```ts
 * import { storedState } from "./state.ts";
 * console.log(storedState("sent"), storedState("delivered")); // attempting delivered
 * ```
 */
export function storedState(kind: ObligationKind): string {
  return kind === "sent" ? "attempting" : kind;
}

/** What the sender had acknowledged at an instant, and its store call in flight then. */
export interface SenderAtInstant extends SenderAtKill {
  /**
   * The obligation its next store call writes, which the file may hold one step ahead
   * (committed, not yet acknowledged): `from` its history's kind (`absent` for a
   * recording) `to` the next one.
   */
  next?: { content: string; from: ObligationKind | "absent"; to: ObligationKind };
  /** The obligations sent (their `sent` line came before the instant). */
  sent: Set<string>;
}

/**
 * What the sender of `obligations` (contents `effect <i>`, one obligation at a time) had
 * acknowledged, read from its journal lines before an instant: each recorded obligation
 * pending, attempting, sent or delivered by its last line; and the call it had made
 * next, not yet acknowledged (the next recording, the next attempt, or the delivery of
 * the one sent). After an `attempting` line the next step is a send, outside the store.
 *
 * @example
 * ```ts ignore
 * const sender = senderFromAcks([{ op: "recorded", id: "ob-1", content: "effect 0" }], 5);
 * console.log(sender.histories.map((h) => h.kind), sender.next?.content); // pending ×2, effect 1
 * ```
 */
export function senderFromAcks(acks: readonly SenderAck[], obligations: number): SenderAtInstant {
  const histories: ObligationHistory[] = [];
  const index = new Map<string, number>();
  const sent = new Set<string>();
  let delivered = 0;
  for (const ack of acks) {
    if (ack.op === "recorded") {
      index.set(ack.id, histories.length);
      histories.push({ content: ack.content ?? "", kind: "pending" });
      continue;
    }
    const at = index.get(ack.id);
    if (at === undefined) {
      throw new Error(`The sender journaled ${ack.op} of an unrecorded ${ack.id}`);
    }
    histories[at] = { ...histories[at]!, kind: ack.op };
    if (ack.op === "sent") sent.add(ack.id);
    if (ack.op === "delivered") delivered++;
  }
  const acknowledgedRecorded = histories.length;
  const last = acks.at(-1);
  let next: SenderAtInstant["next"];
  if (acknowledgedRecorded < obligations) {
    next = {
      content: obligationContent("effect", acknowledgedRecorded),
      from: "absent",
      to: "pending",
    };
    histories.push({ content: next.content, kind: "pending" });
  } else if (last?.op === "sent") {
    next = { content: histories[index.get(last.id)!]!.content, from: "sent", to: "delivered" };
  } else if (last?.op !== "attempting") {
    const pending = histories.find((h) => h.kind === "pending");
    if (pending) next = { content: pending.content, from: "pending", to: "attempting" };
  }
  return {
    recorded: histories.length,
    acknowledgedRecorded,
    acknowledgedDelivered: delivered,
    histories,
    ...(next ? { next } : {}),
    sent,
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
  for (const [i, h] of sender.histories.entries()) {
    if (i < sender.acknowledgedRecorded && !byContent.has(h.content)) lost++;
    if (i < sender.acknowledgedDelivered && byContent.get(h.content)?.state !== "delivered") lost++;
  }
  return lost + live.filter((c) => byContent.get(c)?.state !== "delivered").length;
}

/** What {@linkcode judgeOutbox} judges: a file and its platform after a clean boot. */
export interface OutboxCase {
  target: string;
  db: string;
  /** What the platform got. */
  arrivals: Arrival[];
  /** Whether the transport deduplicates by key. */
  idempotent: boolean;
  /** The policy judged (on a transport that does not deduplicate). */
  policy: DeliveryPolicy;
  /** The dead processes' obligations, by content. */
  histories: readonly ObligationHistory[];
  /** Contents among them the file may lack (a recording nobody acknowledged). */
  optional?: readonly string[];
  /** Contents a live process recorded and was acknowledged delivered: (1,0), delivered. */
  live?: readonly string[];
  /** Contents in the file judged elsewhere (another life): their copies are not judged. */
  others?: readonly string[];
  /** Acknowledged work, for the count of operations lost. */
  sender?: SenderAtKill;
  /** The two reads of the file, when the caller made them. */
  reads?: readonly [RecoveredOutbox, RecoveredOutbox];
  /** Their soundness (`soundness`), when the caller judged it as it read them. */
  sound?: readonly string[];
}

/** Clause 5's verdict on one recovered file. */
export interface OutboxJudgement extends StateJudgement {
  /** The recovered outbox (first pass). */
  outbox: RecoveredOutbox;
}

type Listed = RecoveredOutbox["obligations"][number];

function copiesOf(arrivals: readonly Arrival[], id: string) {
  const mine = arrivals.filter((a) => a.obligationId === id);
  return {
    unmarked: mine.filter((a) => !a.marker).length,
    marked: mine.filter((a) => a.marker).length,
  };
}

/** Each obligation's copies: exact per its history and the policy, or once after dedupe. */
function copiesCheck(
  c: OutboxCase,
  byContent: Map<string, Listed>,
  known: Set<string>,
): StateCheck {
  const violations: string[] = [];
  const deduped = effectsPerObligation(c.arrivals, true);
  const judge = (h: ObligationHistory) => {
    const o = byContent.get(h.content);
    if (!o) return;
    if (c.idempotent) {
      const n = deduped.get(o.obligationId) ?? 0;
      if (n !== 1) {
        violations.push(
          `${describeHistory(h)} reached the platform ${n} time(s) after dedupe by key`,
        );
      }
      return;
    }
    const actual = copiesOf(c.arrivals, o.obligationId);
    const expected = expectedCopies(h, c.policy);
    if (actual.unmarked !== expected.unmarked || actual.marked !== expected.marked) {
      violations.push(`${describeHistory(h)}: ${copiesGap(actual, expected, c.policy)}`);
    }
  };
  c.histories.forEach(judge);
  for (const content of c.live ?? []) judge({ content, kind: "pending" });
  const stray = c.arrivals.filter((a) => !known.has(a.obligationId));
  if (stray.length) {
    violations.push(`copies of an obligation the file does not hold: ${JSON.stringify(stray[0])}`);
  }
  return {
    name: c.idempotent
      ? "every obligation delivered exactly once after dedupe by key"
      : `copies per obligation (unmarked, marked) under ${c.policy}`,
    violations,
    missing: [],
  };
}

/** Each copy is what was recorded, behind its marker when it has one. */
function contentCheck(c: OutboxCase, byId: Map<string, Listed>): StateCheck {
  const violations = c.arrivals.flatMap((a) => {
    const o = byId.get(a.obligationId);
    if (!o) return [];
    const refused = o.stored !== undefined && writtenContent(o.stored).refused;
    const want = `${a.marker ?? ""}${refused ? o.stored : o.content}`;
    return a.content === want ? [] : [
      `a copy of "${
        shownContent(o.content)
      }" (${a.obligationId}, pid ${a.pid}) reached the platform as ${
        JSON.stringify(a.content)
      }, not ${JSON.stringify(want)}`,
    ];
  });
  return { name: "each copy carries the recorded content", violations, missing: [] };
}

/**
 * Each obligation holds its content as recorded (or plain after a typed refusal).
 *
 * @param outbox The recovered outbox.
 * @returns The check, with how many obligations changed and the first difference.
 */
export function contentsKept(outbox: RecoveredOutbox): StateCheck {
  const changed = outbox.obligations.flatMap((o) => {
    const change = o.stored === undefined ? undefined : contentChange(o.stored);
    return change ? [change] : [];
  });
  return {
    name: "every obligation's content kept as written (UTF-8, line breaks, a NUL)",
    pattern: "text-changed",
    violations: changed.length
      ? [`${changed.length} obligation(s) changed, first: ${changed[0]}`]
      : [],
    missing: [],
  };
}

// A character a reader sees: not white space, not a control or format (zero-width)
// character, not a combining mark (one alone marks nothing), not a lone surrogate, not a
// default-ignorable one (the Hangul fillers) and not the blank Braille pattern.
const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{M}\p{Cs}\p{Default_Ignorable_Code_Point}\u2800]/u;

/**
 * Whether a recovery marker holds at least one character a reader sees (the marker is
 * there so that a reader sees the copy may repeat one).
 *
 * @param marker The marker, as it arrives in front of the content.
 * @returns `true` when one of its characters is visible.
 * @example
 * ```ts
 * import { markerShows } from "./state.ts";
 * console.log(markerShows("[resent] "), markerShows("\u200b"), markerShows(" \u0301")); // true false false
 * ```
 */
export function markerShows(marker: string): boolean {
  return VISIBLE.test(marker);
}

function codePoints(text: string): string {
  return [...text].map((c) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`)
    .join(" ");
}

/** Each recovery marker, as it arrived in front of a copy, has a character a reader sees. */
function markerCheck(c: OutboxCase, byId: Map<string, Listed>): StateCheck {
  const violations = c.arrivals.flatMap((a) => {
    if (a.marker === null || markerShows(a.marker)) return [];
    const o = byId.get(a.obligationId);
    return [
      `a marked copy of ${
        o ? `"${shownContent(o.content)}"` : "an obligation"
      } (${a.obligationId}, pid ${a.pid}) arrived behind the marker ${JSON.stringify(a.marker)} (${
        codePoints(a.marker)
      }), which has no visible character: no reader can see the copy may repeat`,
    ];
  });
  return { name: "every recovery marker shows", violations, missing: [] };
}

/** Every obligation ends where its policy lets it, with a reason unless delivered. */
function terminalCheck(c: OutboxCase, byContent: Map<string, Listed>): StateCheck {
  const violations: string[] = [];
  const judge = (h: ObligationHistory) => {
    const o = byContent.get(h.content);
    if (!o) return;
    const allowed = c.idempotent ? ["delivered"] : terminalStates(h, c.policy);
    if (!allowed.includes(o.state)) {
      violations.push(
        `${describeHistory(h)} ended ${o.state} (${JSON.stringify(o.lastError)}), expected ${
          allowed.join(" or ")
        }`,
      );
    } else if (o.state !== "delivered" && !o.lastError?.trim()) {
      violations.push(`${describeHistory(h)} ended ${o.state} without a reason`);
    }
  };
  c.histories.forEach(judge);
  for (const content of c.live ?? []) judge({ content, kind: "pending" });
  return {
    name: `every obligation ends terminal under ${
      c.idempotent ? "the idempotent transport" : c.policy
    }`,
    violations,
    missing: [],
  };
}

/**
 * Judges a file and its platform after a clean boot: copies per obligation (exact, by
 * history and policy; once after dedupe with the idempotent transport), contents kept as
 * recorded, copies carry the recorded content behind a visible marker, every obligation
 * terminal, none silently lost or made up; states valid, two passes identical,
 * `integrity_check` ok, the store's invariants.
 */
export async function judgeOutbox(c: OutboxCase): Promise<OutboxJudgement> {
  const [first, second] = c.reads ??
    [await recoverOutbox(c.target, c.db), await recoverOutbox(c.target, c.db)];
  const byContent = new Map(first.obligations.map((o) => [o.content, o]));
  const byId = new Map(first.obligations.map((o) => [o.obligationId, o]));
  const optional = new Set(c.optional ?? []);
  const recorded = new Set([
    ...c.histories.map((h) => h.content),
    ...(c.live ?? []),
    ...(c.others ?? []),
  ]);
  const others = new Set(c.others ?? []);
  const silently: string[] = [];
  for (const content of [...c.histories.map((h) => h.content), ...(c.live ?? [])]) {
    if (!byContent.has(content) && !optional.has(content)) {
      silently.push(
        `"${shownContent(content)}" was recorded and acknowledged; the file does not hold it`,
      );
    }
  }
  for (const o of first.obligations) {
    if (!recorded.has(o.content)) {
      silently.push(
        `the file holds ${JSON.stringify(o.content)} (${o.obligationId}), which nobody recorded`,
      );
    }
  }
  // Obligations the policy promised to the platform that never reached it: lost work.
  const promised = (h: ObligationHistory) => {
    const e = expectedCopies(h, c.policy);
    return c.idempotent || e.unmarked + e.marked > 0;
  };
  const dropped = c.histories.filter((h) => {
    const o = byContent.get(h.content);
    return o && promised(h) && !c.arrivals.some((a) => a.obligationId === o.obligationId);
  }).length;
  const judged = new Set(
    first.obligations.filter((o) => !others.has(o.content)).map((o) => o.obligationId),
  );
  const scoped = {
    ...c,
    arrivals: c.arrivals.filter((a) => judged.has(a.obligationId) || !byId.has(a.obligationId)),
  };
  const invalid = first.obligations.filter((o) => !STATES.includes(o.state));
  const checks: StateCheck[] = [
    contentsKept(first),
    copiesCheck(scoped, byContent, new Set(byId.keys())),
    contentCheck(scoped, byId),
    markerCheck(scoped, byId),
    terminalCheck(c, byContent),
    { name: "no obligation silently lost", violations: silently, missing: [] },
    {
      name: "outbox states valid, recovery deterministic, invariants",
      violations: [
        ...(invalid.length ? [`invalid states: ${JSON.stringify(invalid)}`] : []),
        ...(c.sound ?? soundness(c.db, [first, second], first.invariants)),
      ],
      missing: [],
    },
  ];
  const lost = (c.sender ? missingAcknowledged(first, c.sender, c.live ?? []) : 0) + dropped;
  return { outbox: first, checks, lost };
}
