/**
 * Mutant (cell 5): `sweepRecoverable` treats every transport as idempotent: an
 * `attempting` obligation of a dead owner (it may already have been sent) comes back
 * as `resend` even when the receiver does not deduplicate, so a crash between the
 * send and its durable record delivers the effect twice.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    sweepRecoverable(_options: { idempotentTransport?: boolean } = {}) {
      return store.sweepRecoverable({ idempotentTransport: true });
    },
  }));
}

/** The crash points it honours (the replaced method delegates, so all of them). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
