/**
 * Mutant (cell 4): `forkSession` copies the branch's texts as C strings (cut at an embedded
 * NUL), while appends keep them whole: a store whose fork path copies text apart from its
 * append path mangles only its branches.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    forkSession(sessionId: string, atMessageId: number, newId: string) {
      const branch = store.forkSession(sessionId, atMessageId, newId);
      const rows = raw.prepare("SELECT id, content FROM messages WHERE session_id = ?")
        .all<{ id: number; content: string | null }>(newId);
      const cut = raw.prepare("UPDATE messages SET content = ? WHERE id = ?");
      for (const row of rows) {
        if (row.content?.includes("\0")) cut.run(row.content.split("\0")[0]!, row.id);
      }
      return branch;
    },
  }));
}

/** The crash points it honours (the fork's own, which it still makes). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
