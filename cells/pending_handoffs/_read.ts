// Reads a handoff file from this process: each session's state, the pending list, the
// store's invariants; twice, by two fresh opens.
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import { invariantsOf, withStore } from "../contract/with_store.ts";
import {
  type HandoffEntry,
  type HandoffState,
  listProblems,
  possibleStates,
  stateProblems,
} from "./judge.ts";

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
export function readHandoffs(
  target: string,
  db: string,
  sessions: readonly string[],
): Promise<HandoffRead> {
  return withStore(target, db, async (store) => {
    const states: Record<string, HandoffState> = {};
    for (const id of sessions) states[id] = await store.getHandoffState!(id);
    const listed = (await store.listPendingHandoffs!()).map((s) => s.id);
    return { states, listed, invariants: await invariantsOf(store) };
  });
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

/** A file read twice and held against its journal. */
export interface JudgedRead {
  /** The first read. */
  read: HandoffRead;
  /** The two reads differ, the integrity check, the invariants. */
  problems: string[];
  /** Sessions in a state no sequence of the acknowledged operations leaves. */
  lost: string[];
  /** What `listPendingHandoffs` lists wrong, against the states. */
  wrong: string[];
}

/**
 * Reads `db` twice ({@linkcode readTwice}) and holds it against the operations journaled
 * since `start`: which sessions lost an acknowledged operation, what the list has wrong.
 */
export async function judgedRead(
  target: string,
  db: string,
  journal: { start: Readonly<Record<string, HandoffState>>; entries: readonly HandoffEntry[] },
): Promise<JudgedRead> {
  const possible = possibleStates(journal.start, journal.entries);
  const { read, problems } = await readTwice(target, db, Object.keys(journal.start));
  const lost = stateProblems(possible, read.states);
  return { read, problems, lost, wrong: listProblems(read.listed, read.states, possible) };
}
