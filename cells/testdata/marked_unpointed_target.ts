/**
 * Test target: the reference store keeping the origin's delivery policy
 * (`marked-at-least-once`) and declaring neither it nor any crash point, as a store
 * written elsewhere might: cell 5 must find the policy from its sweep's answers and walk
 * its sweep with the kill series.
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";

/** Opens the reference store with the origin's delivery policy. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return SessionDB.open(path, {
    ...(options.journalMode ? { journalMode: options.journalMode } : {}),
    deliveryPolicy: "marked-at-least-once",
  });
}

/** None. */
export function crashPoints(): string[] {
  return [];
}
