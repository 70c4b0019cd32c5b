/**
 * The reference target: the project's own {@linkcode SessionDB}.
 *
 * @example
 * ```ts
 * import { openStore } from "./reference_target.ts";
 * const store = openStore(`${Deno.makeTempDirSync()}/s.db`, {});
 * store.close();
 * ```
 *
 * @module
 */
import { crashPoints as storeCrashPoints, SessionDB } from "../session_db/mod.ts";
import { Database } from "../session_db/sqlite/mod.ts";
import type { SchemaViolation, StoreOptions } from "./contract/target.ts";

/**
 * Opens the reference store.
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @returns The store.
 */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
}

/**
 * The crash points the reference store honours.
 *
 * @returns Their names.
 */
export function crashPoints(): string[] {
  return storeCrashPoints();
}

/**
 * Writes a state that breaks one of the reference store's schema rules into its closed
 * file, with raw SQL and foreign keys off (bypassing every check its methods make), for
 * cell 13: `orphan-message` adds a message of the missing session `ghost`;
 * `id-regression` adds a message of session `s` whose id is lower than every id the
 * store has given (its ids come from an AUTOINCREMENT sequence starting at 1). A fork
 * records no fork point (it is a session of copies), so `fork-past-end` is a state this
 * store's file cannot hold: `false`.
 *
 * @param path The closed database file.
 * @param violation The rule to break.
 * @returns Whether the violation was written.
 * @example
 * ```ts
 * import { openStore, plantViolation } from "./reference_target.ts";
 * const path = `${Deno.makeTempDirSync()}/s.db`;
 * const store = openStore(path, {});
 * store.createSession("s");
 * store.appendMessage("s", { role: "user", content: "m0" });
 * store.close();
 * console.log(plantViolation(path, "orphan-message")); // true
 * const reopened = openStore(path, {});
 * console.log(reopened.checkInvariants().length > 0); // true
 * reopened.close();
 * ```
 */
export function plantViolation(path: string, violation: SchemaViolation): boolean {
  if (violation === "fork-past-end") return false;
  const db = new Database(path);
  try {
    db.setBusyTimeout(5000);
    // Off, so that the store's own foreign keys do not refuse the orphan.
    db.exec("PRAGMA foreign_keys = OFF");
    db.transaction(() => {
      const now = Date.now() / 1000;
      if (violation === "orphan-message") {
        db.exec(
          "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('ghost', 'user', 'orphan', ?)",
          now,
        );
        return;
      }
      const last = db.prepare("SELECT max(id) FROM messages WHERE session_id = 's'")
        .value<[number | null]>()?.[0];
      if (last === null || last === undefined) {
        throw new Error("Cannot plant id-regression: session s has no message");
      }
      db.exec(
        `INSERT INTO messages (id, session_id, role, content, timestamp)
         SELECT min(id) - 1, 's', 'user', 'regressed', ? FROM messages`,
        now,
      );
      // Counted, so that only the id breaks a rule.
      db.exec("UPDATE sessions SET message_count = message_count + 1 WHERE id = 's'");
    }).immediate();
  } finally {
    db.close();
  }
  return true;
}
