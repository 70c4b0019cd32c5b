/**
 * The reference session store (`SessionDB`) over SQLite through FFI: sessions and
 * append-only messages, a parked-handoff claim, compression rotation, rewind and
 * fork, a delivery outbox, the journal-mode resolver and named crash points.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./mod.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/sessions.db`);
 * db.createSession("s1");
 * db.appendMessage("s1", { role: "user", content: "hello" });
 * console.log(db.getMessages("s1").map((m) => m.content)); // ["hello"]
 * db.close();
 * ```
 *
 * @module
 */
export * from "./session_db.ts";
export * from "./types.ts";
export { obligationId } from "./obligation_id.ts";
export {
  DEFAULT_RECOVERY_MARKER,
  DELIVERY_POLICIES,
  type DeliveryPolicy,
} from "./delivery_policy.ts";
export * from "./errors.ts";
export * from "./journal_mode.ts";
export * from "./crash_points.ts";
export { SCHEMA_VERSION } from "./schema.ts";
// The binding's API; its numeric constants (sqlite/constants.ts) stay in sqlite/mod.ts.
export * from "./sqlite/database.ts";
export * from "./sqlite/statement.ts";
export * from "./sqlite/sqlite_error.ts";
export { SqliteLibraryError, systemLibraryPath } from "./sqlite/library.ts";
