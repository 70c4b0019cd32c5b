/**
 * Test target: the reference store keeping the origin's delivery policy,
 * `marked-at-least-once` (a maybe-sent obligation is resent with a visible recovery
 * marker), declared as such, with its crash points.
 *
 * @module
 */
import { crashPoints as referencePoints, SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";

/** The delivery policy it keeps. */
export const deliveryPolicy = "marked-at-least-once";

/** Opens the reference store with the origin's delivery policy. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return SessionDB.open(path, {
    ...(options.journalMode ? { journalMode: options.journalMode } : {}),
    deliveryPolicy,
  });
}

/** The reference store's crash points. */
export function crashPoints(): string[] {
  return referencePoints();
}
