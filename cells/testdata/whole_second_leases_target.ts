/**
 * Test target: the reference store, correct, that keeps its compression-lock expiries in
 * whole seconds, rounded up, as a store with an `expires_at` column of Unix seconds does:
 * a lease lasts at least as long as asked, up to a second longer. The cells must judge its
 * leases by when the store lets another holder take them, not by the caller's clock.
 *
 * Each lease the reference grants or renews gets its expiry rewritten at once to the next
 * whole second after the grant's return plus the lease: one reading of the clock per lease,
 * so that a lease granted later never ends sooner.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import { Database } from "../../session_db/sqlite/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

const LEASED = new Set(["tryAcquireCompressionLock", "refreshCompressionLock"]);

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openReference(path, options);
  const raw = new Database(path);
  raw.exec("PRAGMA busy_timeout = 5000");
  const inWholeSeconds = (session: string, holder: string, ttlMs: number) => {
    const expires = Math.ceil((Date.now() + ttlMs) / 1000);
    raw.exec(
      "UPDATE compression_locks SET expires_at = ? WHERE session_id = ? AND holder = ?",
      expires,
      session,
      holder,
    );
  };
  return wrapped(store, (key, method: Method) => {
    if (key === "close") {
      return () => {
        raw.close();
        return method();
      };
    }
    if (typeof key !== "string" || !LEASED.has(key)) return method;
    return (session: string, holder: string, ttlMs: number) => {
      const granted = method(session, holder, ttlMs);
      if (granted === true) inWholeSeconds(session, holder, ttlMs);
      return granted;
    };
  });
}
