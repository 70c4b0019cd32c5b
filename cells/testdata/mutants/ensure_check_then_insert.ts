/**
 * Mutant (cell 10): `ensureSession` reads the session, then, when it is missing, inserts
 * it with a plain `INSERT` in a transaction of its own. Racers that all read it missing
 * insert it too, and every one but the first throws SQLite's constraint error.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    ensureSession(id: string) {
      const found = store.getSession(id);
      if (found) return found;
      raw.prepare("INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', ?)")
        .run(id, Date.now() / 1000);
      return store.getSession(id);
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["ensureSession"]);
}
