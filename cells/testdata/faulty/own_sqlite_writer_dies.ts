/**
 * Faulty target on its own SQLite (Deno's `node:sqlite`, never this project's binding):
 * the fifth append of cell 1's writer throws. Cell 1 must fail at once, and its evidence
 * must name the SQLite the store ran (`own-sqlite`, its version), never a library it did
 * not load.
 *
 * @module
 */
import { DatabaseSync } from "node:sqlite";
import type { CellMessage, StoredMessage } from "../../contract/target.ts";

/** Opens the faulty store. */
export function openStore(path: string): unknown {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA busy_timeout = 5000");
  db.exec(`CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY);
    CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT)`);
  let appends = 0;
  return {
    createSession(id: string) {
      db.prepare("INSERT OR IGNORE INTO sessions (id) VALUES (?)").run(id);
    },
    appendMessage(sessionId: string, message: CellMessage): number {
      if (sessionId !== "probe" && ++appends === 5) {
        throw new Error("writer died: the disk is on fire");
      }
      const row = db.prepare("INSERT INTO messages (session_id, role, content) VALUES (?, ?, ?)")
        .run(sessionId, message.role, message.content);
      return Number(row.lastInsertRowid);
    },
    getMessages(sessionId: string): StoredMessage[] {
      return db.prepare("SELECT id, role, content FROM messages WHERE session_id = ? ORDER BY id")
        .all(sessionId).map((r) => ({
          id: Number(r.id),
          role: String(r.role),
          content: r.content === null ? null : String(r.content),
        }));
    },
    close() {
      db.close();
    },
  };
}
