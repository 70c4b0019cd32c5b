// The delivery policies the reference store's outbox keeps for an obligation that may
// already have been sent when its owner died (see docs/delivery_policies.md).
import { InvalidArgumentError } from "./errors.ts";

/**
 * What a store does with an obligation that may already have been sent (its owner died
 * while it was `attempting`, or after sending and before booking it) when the transport
 * does not deduplicate:
 *
 * - `at-most-once` (the reference store's default): it is settled `unknown` with a
 *   reason and never resent, so nothing reaches the platform twice, and a reply may be
 *   lost.
 * - `marked-at-least-once`: it is resent with a visible recovery marker in front of its
 *   content, so every reply arrives, and at most one copy is unmarked.
 *
 * With an idempotent transport both resend it under its key (exactly one after dedupe).
 * `SessionDB.open` takes it as `deliveryPolicy`; a target module declares the one its
 * store keeps as `deliveryPolicy`, and cell 5 judges it.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * import type { DeliveryPolicy } from "./delivery_policy.ts";
 * // In a target module, the same type declares the store's policy to cell 5.
 * const deliveryPolicy: DeliveryPolicy = "marked-at-least-once";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`, { deliveryPolicy });
 * console.log(db.deliveryPolicy); // "marked-at-least-once"
 * db.close();
 * ```
 */
export type DeliveryPolicy = "at-most-once" | "marked-at-least-once";

/**
 * The delivery policies, by name.
 *
 * @example
 * ```ts
 * import { DELIVERY_POLICIES } from "./delivery_policy.ts";
 * console.log(DELIVERY_POLICIES.join(", ")); // at-most-once, marked-at-least-once
 * ```
 */
export const DELIVERY_POLICIES: readonly DeliveryPolicy[] = [
  "at-most-once",
  "marked-at-least-once",
];

/**
 * The marker a `marked-at-least-once` store puts in front of a resent obligation's
 * content unless told otherwise.
 *
 * @example
 * ```ts
 * import { DEFAULT_RECOVERY_MARKER } from "./delivery_policy.ts";
 * console.log(`${DEFAULT_RECOVERY_MARKER}See you at 5`); // [resent after a restart] See you at 5
 * ```
 */
export const DEFAULT_RECOVERY_MARKER = "[resent after a restart] ";

/** The policy and marker of one open store (checked). */
export interface Delivery {
  policy: DeliveryPolicy;
  marker: string;
}

/**
 * Checks the delivery options of `SessionDB.open` and fills the defaults.
 *
 * @param policy The requested policy, or `undefined`.
 * @param marker The requested marker, or `undefined`.
 * @returns The policy and marker in force.
 * @throws {InvalidArgumentError} On an unknown policy or an empty marker.
 */
export function deliveryOf(policy: unknown, marker: unknown): Delivery {
  if (policy !== undefined && !DELIVERY_POLICIES.includes(policy as DeliveryPolicy)) {
    throw new InvalidArgumentError(
      `Invalid delivery policy "${policy}": use one of ${DELIVERY_POLICIES.join(", ")}`,
    );
  }
  if (marker !== undefined && (typeof marker !== "string" || marker.trim() === "")) {
    throw new InvalidArgumentError(
      "Invalid recovery marker: it must be a string with visible characters (the platform shows it)",
    );
  }
  return {
    policy: (policy as DeliveryPolicy | undefined) ?? "at-most-once",
    marker: (marker as string | undefined) ?? DEFAULT_RECOVERY_MARKER,
  };
}
