// Cell 5's delivery policies: which one a store keeps (declared by its target, or implied
// by what its sweeps answered), and what each promises per obligation: the exact
// (unmarked, marked) copies the platform holds after the first clean boot, and how the
// obligation ends. See docs/delivery_policies.md.
import {
  DELIVERY_POLICIES,
  type DeliveryPolicy,
  loadTarget,
  TargetError,
} from "../contract/target.ts";
import { shownContent } from "./_content.ts";

/** Where an obligation's first owner left it when it died. */
export type ObligationKind = "delivered" | "pending" | "attempting" | "sent";

/** One obligation of the dead processes, as the cell knows it. */
export interface ObligationHistory {
  /** Its content (the cell recorded it). */
  content: string;
  /** Where its first owner died. */
  kind: ObligationKind;
  /** A boot killed inside its redelivery had sent a copy of it (its first send). */
  killedBootSent?: boolean;
}

/** Copies of one obligation at the platform. */
export interface Copies {
  unmarked: number;
  marked: number;
}

/** The policy a cell judges, and why that one. */
export interface PolicyChoice {
  policy: DeliveryPolicy;
  declared: boolean;
  /** Said in the report: the declaration, or what the sweeps answered. */
  why: string;
}

/** One answer of a sweep on a transport that does not deduplicate. */
export interface SweepAnswer {
  /** The sweep's action. */
  action: string;
  /** Whether the obligation may have been sent (attempting, or sent and not booked). */
  maybeSent: boolean;
}

/**
 * The policy the target declares (`deliveryPolicy`, a value or a function), or
 * `undefined`; a value that is not a policy is the target's error, named with the fix.
 */
export async function declaredPolicy(target: string): Promise<DeliveryPolicy | undefined> {
  const module = await loadTarget(target);
  const raw = module.deliveryPolicy;
  const value: unknown = typeof raw === "function" ? raw() : raw;
  if (value === undefined) return undefined;
  if (!DELIVERY_POLICIES.includes(value as DeliveryPolicy)) {
    throw new TargetError(
      `Invalid deliveryPolicy ${JSON.stringify(value)} in target module "${target}": use ${
        DELIVERY_POLICIES.map((p) => `"${p}"`).join(" or ")
      }, or declare none`,
    );
  }
  return value as DeliveryPolicy;
}

/**
 * The policy a store's sweeps imply: a resend of a maybe-sent obligation on a transport
 * that does not deduplicate is `marked-at-least-once` (the only policy that resends
 * there); anything else is `at-most-once`.
 */
export function impliedPolicy(answers: readonly SweepAnswer[]): PolicyChoice {
  const maybeSent = answers.filter((a) => a.maybeSent);
  const resent = maybeSent.filter((a) => a.action === "resend").length;
  const none = "the target declares no deliveryPolicy";
  if (resent > 0) {
    return {
      policy: "marked-at-least-once",
      declared: false,
      why:
        `implied: ${none}, and its sweeps answered resend to ${resent} of ${maybeSent.length} maybe-sent obligation(s) on a transport that does not deduplicate`,
    };
  }
  return {
    policy: "at-most-once",
    declared: false,
    why: maybeSent.length
      ? `implied: ${none}, and its sweeps never resent a maybe-sent obligation on a transport that does not deduplicate (${maybeSent.length} answered ${
        [...new Set(maybeSent.map((a) => a.action))].join(", ")
      })`
      : `implied: ${none}, and no sweep met a maybe-sent obligation (today's default)`,
  };
}

/** The declared policy, else the one the answers imply. */
export function choosePolicy(
  declared: DeliveryPolicy | undefined,
  answers: readonly SweepAnswer[],
): PolicyChoice {
  return declared
    ? { policy: declared, declared: true, why: "declared by the target (deliveryPolicy)" }
    : impliedPolicy(answers);
}

/** Whether an obligation of this history may have been sent when recovery met it. */
export function maybeSent(h: ObligationHistory): boolean {
  return h.kind === "attempting" || h.kind === "sent" || h.killedBootSent === true;
}

/**
 * The exact (unmarked, marked) copies the platform holds after the first clean boot, on a
 * transport that does not deduplicate. A copy the sender made is unmarked; a plain
 * redelivery of a never-attempted obligation is unmarked; every resend of a maybe-sent one
 * is marked (`marked-at-least-once`) or never happens (`at-most-once`).
 */
export function expectedCopies(h: ObligationHistory, policy: DeliveryPolicy): Copies {
  const marked = policy === "marked-at-least-once";
  switch (h.kind) {
    case "delivered":
      return { unmarked: 1, marked: 0 };
    case "pending":
      // A boot killed right after sending it left it attempting: maybe sent.
      return { unmarked: 1, marked: h.killedBootSent && marked ? 1 : 0 };
    case "attempting":
      return { unmarked: 0, marked: marked ? 1 + (h.killedBootSent ? 1 : 0) : 0 };
    case "sent":
      return { unmarked: 1, marked: marked ? 1 + (h.killedBootSent ? 1 : 0) : 0 };
  }
}

/** Whether the obligation must end settled with a reason rather than delivered. */
export function mustSettle(h: ObligationHistory, policy: DeliveryPolicy): boolean {
  return policy === "at-most-once" && maybeSent(h);
}

/** The states an obligation may end in after a clean boot, with a reason unless delivered. */
export function terminalStates(h: ObligationHistory, policy: DeliveryPolicy): string[] {
  if (mustSettle(h, policy)) return ["unknown", "failed", "abandoned"];
  return policy === "marked-at-least-once" ? ["delivered", "abandoned"] : ["delivered"];
}

/** How a history reads in a violation. */
export function describeHistory(h: ObligationHistory): string {
  const where = {
    delivered: "delivered before the crash",
    pending: "recorded and never attempted",
    attempting: "attempting and not sent",
    sent: "sent and not booked",
  }[h.kind];
  const boot = h.killedBootSent
    ? h.kind === "pending"
      ? ", then a boot died right after sending it"
      : ", then a boot died right after resending it"
    : "";
  return `"${shownContent(h.content)}" (${where}${boot})`;
}

/** Why `actual` copies are not `expected` under `policy`, in a reader's words. */
export function copiesGap(actual: Copies, expected: Copies, policy: DeliveryPolicy): string {
  const shown = (c: Copies) => `(${c.unmarked},${c.marked})`;
  const total = actual.unmarked + actual.marked;
  const reasons: string[] = [];
  if (total === 0) reasons.push("it never reached the platform (a reply lost)");
  if (policy === "at-most-once") {
    if (total > 1) reasons.push("it reached the platform more than once");
    else if (total > expected.unmarked + expected.marked) {
      reasons.push("a maybe-sent obligation was sent again (at-most-once never resends)");
    }
  } else {
    if (actual.unmarked > 1) reasons.push("an unmarked duplicate");
    else if (actual.unmarked > expected.unmarked) reasons.push("a resend that is not marked");
    if (actual.unmarked < expected.unmarked && total > 0) reasons.push("an unmarked copy missing");
    if (actual.marked < expected.marked && total > 0) reasons.push("a marked resend missing");
    if (actual.marked > expected.marked) reasons.push("an extra marked copy");
  }
  return `${shown(actual)} copies (unmarked, marked), expected ${shown(expected)} under ${policy}${
    reasons.length ? `: ${reasons.join(", ")}` : ""
  }`;
}
