// Reads a recovered file from this process: what cell 11 compares across two fresh reads.
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import type { Store } from "../contract/target.ts";
import { continuations, invariantsOf, withStore } from "../contract/with_store.ts";
import { type ReadBack, recoveredProblems } from "./judge.ts";

/**
 * Opens the store on `db`, reads its sessions, each continuation's messages, its invariants
 * and whatever `extra` reads, and closes it.
 */
export async function readBack(
  target: string,
  db: string,
  extra?: (store: Store) => Promise<Record<string, unknown>>,
): Promise<ReadBack> {
  return await withStore(target, db, async (store) => {
    const { sessions, children } = await continuations(store);
    const invariants = await invariantsOf(store);
    const answers = extra ? await extra(store) : undefined;
    return { sessions, children, invariants, ...(answers ? { answers } : {}) };
  });
}

/**
 * Reads `db` twice, each by a fresh open, and says what fails: the reads differ, the
 * invariants, the integrity check. Returns the first read too.
 */
export async function recovered(
  target: string,
  db: string,
  extra?: (store: Store) => Promise<Record<string, unknown>>,
): Promise<{ state: ReadBack; problems: string[] }> {
  const first = await readBack(target, db, extra);
  const second = await readBack(target, db, extra);
  return { state: first, problems: recoveredProblems(first, second, integrityIfSqlite(db)) };
}
