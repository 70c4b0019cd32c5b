// Reads a handoff file from this process: each session's state, the pending list, the
// store's invariants; twice, by two fresh opens.
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import { openTargetStore } from "../contract/target.ts";
import type { HandoffState } from "./judge.ts";

/** What one fresh open reads. */
export interface HandoffRead {
  /** `getHandoffState` of each session. */
  states: Record<string, HandoffState>;
  /** The ids `listPendingHandoffs` returned, in order. */
  listed: string[];
  /** The store's invariant violations. */
  invariants: string[];
}

/** One fresh open of `db`: the states of `sessions`, the list, the invariants. */
export async function readHandoffs(
  target: string,
  db: string,
  sessions: readonly string[],
): Promise<HandoffRead> {
  const store = await openTargetStore(target, db);
  try {
    const states: Record<string, HandoffState> = {};
    for (const id of sessions) states[id] = await store.getHandoffState!(id);
    const listed = (await store.listPendingHandoffs!()).map((s) => s.id);
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { states, listed, invariants };
  } finally {
    await store.close();
  }
}

/**
 * Reads `db` twice by fresh opens; returns the first read and what fails: the reads differ
 * (recovery determinism), the invariants, the integrity check.
 */
export async function readTwice(
  target: string,
  db: string,
  sessions: readonly string[],
): Promise<{ read: HandoffRead; problems: string[] }> {
  const read = await readHandoffs(target, db, sessions);
  const again = await readHandoffs(target, db, sessions);
  const problems: string[] = [];
  if (JSON.stringify(read) !== JSON.stringify(again)) {
    problems.push(`two fresh reads differ: ${JSON.stringify(read)} then ${JSON.stringify(again)}`);
  }
  const integrity = integrityIfSqlite(db);
  if (integrity !== undefined && integrity !== "ok") problems.push(`integrity_check: ${integrity}`);
  if (read.invariants.length) problems.push(`invariants: ${read.invariants.join("; ")}`);
  return { read, problems };
}
