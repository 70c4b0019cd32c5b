/**
 * Test target: the reference store, correct, that keeps its compression-lock expiries in
 * whole seconds, rounded up, as a store with an `expires_at` column of Unix seconds does:
 * a lease lasts at least as long as asked, up to a second longer. The cells must judge its
 * leases by when the store lets another holder take them, not by the caller's clock.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** `ttlMs` lengthened so that the lease ends on the next whole second. */
function wholeSeconds(ttlMs: number): number {
  const now = Date.now();
  return Math.ceil((now + ttlMs) / 1000) * 1000 - now;
}

const LEASED = new Set(["tryAcquireCompressionLock", "refreshCompressionLock"]);

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return wrapped(
    openReference(path, options),
    (key, method: Method) =>
      typeof key === "string" && LEASED.has(key)
        ? (session: unknown, holder: unknown, ttlMs: unknown) =>
          method(session, holder, wholeSeconds(Number(ttlMs)))
        : method,
  );
}
