/**
 * Mutant (cell 5, resume after recovery): obligation ids come from a sequence kept in
 * `state_meta`, and a recovery sweep that took obligations over resets it to how many it
 * took (a value recovery leaves stale). The recovered file reads back right;
 * the next life's first recording collides with an existing obligation and is dropped (the
 * store answers with the old one). It declares no crash point in what it replaces.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    recordObligation(o: { sessionId: string; messageRef: string; content: string }) {
      const id = raw.transaction(() => {
        const existing = raw.prepare(
          "SELECT obligation_id FROM outbox WHERE session_id = ? AND message_ref = ? AND content = ?",
        ).value<[string]>(o.sessionId, o.messageRef, o.content);
        if (existing) return existing[0];
        const next = raw.prepare("SELECT value FROM state_meta WHERE key = 'next_obligation'")
          .value<[string]>()?.[0] ??
          String(raw.prepare("SELECT count(*) FROM outbox").value<[number]>()![0]);
        const id = `ob-${next}`;
        const t = Date.now() / 1000;
        raw.prepare(
          `INSERT OR IGNORE INTO outbox (obligation_id, session_id, message_ref, content, state,
             owner_pid, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`,
        ).run(id, o.sessionId, o.messageRef, o.content, Deno.pid, t, t);
        raw.prepare("INSERT OR REPLACE INTO state_meta (key, value) VALUES ('next_obligation', ?)")
          .run(String(Number(next) + 1));
        return id;
      }).immediate();
      return store.getObligation(id)!;
    },
    sweepRecoverable(sweep: { idempotentTransport?: boolean } = {}) {
      const taken = store.sweepRecoverable(sweep);
      if (taken.length) {
        raw.transaction(() =>
          raw.prepare(
            "INSERT OR REPLACE INTO state_meta (key, value) VALUES ('next_obligation', ?)",
          ).run(String(taken.length))
        ).immediate();
      }
      return taken;
    },
  }));
}

/** The reference store's crash points, none in what it replaces. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["recordObligation", "sweepRecoverable"]);
}
