// The crash sweep's oracle: the checks of one recovered state. The interrupted operation
// is all-or-nothing (the recovered state equals the uncrashed run's state without it or
// with it), acknowledged operations kept their results, a point after COMMIT keeps the
// operation, the owning clause holds (no compression orphan, a rotated parent refuses
// appends; cells 8 to 13's checks in `clause_checks.ts`), and the cross-cutting checks:
// recovery determinism, integrity, the store's invariants. The journal mode is observed by the callers at each kill, before anything
// reopens the files (`observeJournalMode`, judged per leg by `legVerdict`).
import { deepStrictEqual } from "node:assert/strict";
import { integrityIfSqlite } from "../../../harness/db_audit.ts";
import type { FileSet } from "../../../recorder/image.ts";
import type { PlannedState } from "./plan.ts";
import {
  OP_METHODS,
  type ProgramOp,
  snapshot,
  type StoreState,
  type SweepStore,
} from "./program.ts";
import { clauseChecks, NEW_CLAUSES } from "./clause_checks.ts";

/** The uncrashed run of a program: the state before and after each operation, and results. */
export interface Reference {
  /** `snaps[i]` is the state before operation `i`; the last, after the program. */
  snaps: StoreState[];
  /** What each operation returned. */
  results: unknown[];
  /** The store's files before operation `i`, and after the program (what a resume starts from). */
  files?: FileSet[];
}

/** An acknowledgement the crash child journaled after an operation returned. */
export interface Ack {
  /** The operation's index in the program. */
  i: number;
  /** The operation. */
  op: string;
  /** What it returned. */
  result: unknown;
}

/** What the oracle checks a recovered state against. */
export interface OracleInput {
  /** Opens the store on the leg. */
  openStore: (path: string) => Promise<SweepStore>;
  /** The state: its program and crash point. */
  state: PlannedState;
  /** The operation the crash interrupted (the number of acknowledgements). */
  interrupted: number;
  /** The acknowledgements the child journaled. */
  acks: readonly Ack[];
  /** The database to check (the files the child left, or a crash image of them). */
  db: string;
  /** The uncrashed run of the program from the state's start. */
  reference: () => Promise<Reference>;
  /** Records a problem under its clause. */
  fail: (clause: string, text: string) => void;
}

/** What the oracle read and how the recovered state matched, for the report and evidence. */
export interface Verdict {
  /** The interrupted operation absent, complete, or one that changes nothing. */
  match?: "without" | "with" | "unchanged";
  /** The recovered state and the store's invariant violations. */
  recovered?: { state: StoreState; invariants: string[] };
  /** The two states the recovered one may equal. */
  candidates: { without?: StoreState; with?: StoreState };
}

/** The clause each operation's state is owned by. */
export const CLAUSES: Record<ProgramOp, string> = {
  append: "prefix durability",
  batch: NEW_CLAUSES.batch,
  claim: "consume-once",
  rotate: "rotation atomicity",
  rewind: "fork determinism",
  fork: "fork determinism",
  record: "delivery outbox exactly-once",
  attempt: "delivery outbox exactly-once",
  deliver: "delivery outbox exactly-once",
  fail: "delivery outbox exactly-once",
  unknown: "delivery outbox exactly-once",
  sweep: "delivery outbox exactly-once",
  end: NEW_CLAUSES.ends,
  reopen: NEW_CLAUSES.ends,
  ensure: NEW_CLAUSES.ends,
  refresh: NEW_CLAUSES.lease,
  request: NEW_CLAUSES.pending,
  ghost: NEW_CLAUSES.checkpoint,
};

/**
 * The clause of a crash point: that of the operation whose methods it is in (`crash
 * points` for a method no operation calls).
 *
 * @param point The crash point, `<method>:<name>`.
 * @returns The clause.
 */
export function clauseOfPoint(point: string): string {
  const method = point.slice(0, point.indexOf(":"));
  const op = (Object.keys(OP_METHODS) as ProgramOp[]).find((o) => OP_METHODS[o].includes(method));
  return op ? CLAUSES[op] : "crash points";
}

/** The cell of each clause the sweep judges. */
export const CLAUSE_CELLS: Readonly<Record<string, number>> = {
  "prefix durability": 1,
  "consume-once": 2,
  "rotation atomicity": 3,
  "fork determinism": 4,
  "delivery outbox exactly-once": 5,
  [NEW_CLAUSES.resume]: 8,
  [NEW_CLAUSES.batch]: 9,
  [NEW_CLAUSES.ends]: 10,
  [NEW_CLAUSES.lease]: 11,
  [NEW_CLAUSES.pending]: 12,
  [NEW_CLAUSES.checkpoint]: 13,
};

/**
 * Checks one recovered state; every problem goes to `input.fail` under its clause (an
 * unexpected error as `recovery`).
 *
 * @param input The state, its acknowledgements, the database and the reference run.
 * @returns What was read and how it matched (partial when a check threw).
 */
export async function checkRecovered(input: OracleInput): Promise<Verdict> {
  const { state, interrupted, fail, db: checkedDb } = input;
  const op = state.program[interrupted]!;
  const verdict: Verdict = { candidates: {} };
  try {
    const recovered = await recoverTwice(input);
    verdict.recovered = recovered;
    const ref = await input.reference();
    const withOp = ref.snaps[interrupted + 1]!;
    verdict.candidates = { without: ref.snaps[interrupted]!, with: withOp };
    checkAcks(input, ref);
    const match = matchInterrupted(input, recovered.state, ref);
    if (match) verdict.match = match;
    crossChecks(input, recovered, match);
    await clauseChecks({
      openStore: input.openStore,
      db: checkedDb,
      program: state.program,
      interrupted,
      match,
      recovered: recovered.state,
      ref,
      fail,
    });
    if (op === "rotate" && verdict.match === "with") {
      // Last: the probe writes. A rotated parent must refuse appends with the typed error.
      const rotated = withOp.sessions.find((s) => s.id === ref.results[interrupted])?.parent;
      await probeRotatedParent(input.openStore, checkedDb, rotated!, fail);
    }
  } catch (error) {
    fail(
      "recovery",
      `cannot check the recovered store: ${
        error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      }`,
    );
  }
  return verdict;
}

/** Recovers the state twice: a second recovery must read the same (determinism). */
async function recoverTwice(
  input: OracleInput,
): Promise<{ state: StoreState; invariants: string[] }> {
  const recovered = await recover(input.openStore, input.db);
  const again = await recover(input.openStore, input.db);
  if (!same(again.state, recovered.state)) {
    input.fail(
      "recovery determinism",
      `a second recovery read another state: ${diff(again.state, recovered.state).join("; ")}`,
    );
  }
  return recovered;
}

/** Every acknowledged operation returned what it returned in the uncrashed run. */
function checkAcks(input: OracleInput, ref: Reference): void {
  const clause = CLAUSES[input.state.program[input.interrupted]!];
  for (const ack of input.acks) {
    if (!same(ack.result, ref.results[ack.i])) {
      input.fail(
        clause,
        `acknowledged operation ${ack.i} (${ack.op}) returned ${
          JSON.stringify(ack.result)
        }, the uncrashed run ${JSON.stringify(ref.results[ack.i])}`,
      );
    }
  }
}

/**
 * How the recovered state matched the interrupted operation: absent, complete, or one
 * that changes nothing; neither is a failure of its clause (and of durability when an
 * earlier operation's state came back).
 */
function matchInterrupted(
  input: OracleInput,
  recovered: StoreState,
  ref: Reference,
): Verdict["match"] {
  const { state, interrupted, fail } = input;
  const op = state.program[interrupted]!;
  const without = ref.snaps[interrupted]!;
  const withOp = ref.snaps[interrupted + 1]!;
  const isWithout = same(recovered, without);
  const isWith = same(recovered, withOp);
  // An operation that changes nothing (a takeover with nothing to take) matches both.
  if (isWithout && isWith) return "unchanged";
  if (isWithout) return "without";
  if (isWith) return "with";
  // Durability: a state an earlier operation left means acknowledged ones were lost.
  const earlier = ref.snaps.slice(0, interrupted).findLastIndex((snap) => same(recovered, snap));
  if (earlier !== -1) {
    fail(
      "durability",
      `acknowledged operation${interrupted - earlier > 1 ? "s" : ""} ${
        Array.from({ length: interrupted - earlier }, (_, j) =>
          `${earlier + j} (${state.program[earlier + j]})`).join(", ")
      } lost: the recovered state is the one before operation ${earlier}`,
    );
  }
  fail(
    CLAUSES[op],
    `the interrupted ${op} (operation ${interrupted}) is neither absent nor complete: ` +
      `against the state without it: ${diff(recovered, without).join("; ")}; ` +
      `against the state with it: ${diff(recovered, withOp).join("; ")}`,
  );
  return undefined;
}

/**
 * A point after COMMIT keeps the operation, no compression orphan, then the cross-cutting
 * checks (after the owning clause, so a failure is named by its clause): integrity and
 * the store's invariants.
 */
function crossChecks(
  input: OracleInput,
  recovered: { state: StoreState; invariants: string[] },
  match: Verdict["match"],
): void {
  const { state, interrupted, fail } = input;
  const op = state.program[interrupted]!;
  if (state.point.endsWith(":afterCommit") && match === "without") {
    fail(CLAUSES[op], `${op} committed before the crash, but the recovered state lacks it`);
  }
  const orphaned = orphans(recovered.state);
  if (orphaned.length) {
    fail(
      "rotation atomicity",
      `compression orphan: ${orphaned.join(", ")} ended by compression without a continuation`,
    );
  }
  const integrity = integrityIfSqlite(input.db);
  if (integrity !== undefined && integrity !== "ok") {
    fail("integrity", `integrity_check: ${integrity}`);
  }
  if (recovered.invariants.length) {
    fail("invariants", recovered.invariants.join("; "));
  }
}

/** An append to a rotated parent must be refused with `CompressionSessionClosedError`. */
async function probeRotatedParent(
  openStore: (path: string) => Promise<SweepStore>,
  db: string,
  rotated: string,
  fail: (clause: string, text: string) => void,
): Promise<void> {
  const store = await openStore(db);
  try {
    await store.appendMessage(rotated, { role: "user", content: "after rotation" });
    fail("rotation atomicity", `an append to the rotated parent ${rotated} was accepted`);
  } catch (error) {
    const name = error instanceof Error ? error.name : String(error);
    if (name !== "CompressionSessionClosedError") {
      fail(
        "rotation atomicity",
        `an append to the rotated parent ${rotated} failed with ${name}, not CompressionSessionClosedError`,
      );
    }
  } finally {
    await store.close();
  }
}

/** Opens the store on `db` once: its state through its own interface, and its invariants. */
export async function recover(
  openStore: (path: string) => Promise<SweepStore>,
  db: string,
): Promise<{ state: StoreState; invariants: string[] }> {
  const store = await openStore(db);
  try {
    const state = await snapshot(store);
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { state, invariants };
  } finally {
    await store.close();
  }
}

function orphans(state: StoreState): string[] {
  const parents = new Set(state.sessions.map((s) => s.parent));
  return state.sessions.filter((s) => s.endReason === "compression" && !parents.has(s.id)).map((
    s,
  ) => s.id);
}

/** A short description of how two states differ (at most `limit` lines). */
export function diff(a: StoreState, b: StoreState, limit = 4): string[] {
  const out: string[] = [];
  const sessionsA = new Map(a.sessions.map((s) => [s.id, s]));
  const sessionsB = new Map(b.sessions.map((s) => [s.id, s]));
  for (const id of new Set([...sessionsA.keys(), ...sessionsB.keys()])) {
    const x = sessionsA.get(id);
    const y = sessionsB.get(id);
    if (!x) out.push(`session ${id} missing`);
    else if (!y) out.push(`session ${id} present (${JSON.stringify(x)})`);
    else if (JSON.stringify(x) !== JSON.stringify(y)) {
      out.push(`session ${id}: ${JSON.stringify(x)} instead of ${JSON.stringify(y)}`);
    }
  }
  for (const id of new Set([...Object.keys(a.messages), ...Object.keys(b.messages)])) {
    const x = a.messages[id] ?? [];
    const y = b.messages[id] ?? [];
    if (JSON.stringify(x) === JSON.stringify(y)) continue;
    const i = x.findIndex((row, n) => JSON.stringify(row) !== JSON.stringify(y[n]));
    const at = i === -1 ? Math.min(x.length, y.length) : i;
    out.push(
      `messages of ${id}: ${x.length} rows instead of ${y.length}, first difference at row ${at}: ${
        JSON.stringify(x[at] ?? null)
      } instead of ${JSON.stringify(y[at] ?? null)}`,
    );
  }
  const obA = new Map(a.obligations.map((o) => [o.content, o]));
  const obB = new Map(b.obligations.map((o) => [o.content, o]));
  for (const id of new Set([...obA.keys(), ...obB.keys()])) {
    const x = obA.get(id);
    const y = obB.get(id);
    if (JSON.stringify(x) !== JSON.stringify(y)) {
      out.push(
        `obligation "${id}": ${JSON.stringify(x ?? null)} instead of ${JSON.stringify(y ?? null)}`,
      );
    }
  }
  return out.length > limit ? [...out.slice(0, limit), `… ${out.length - limit} more`] : out;
}

export function same(a: unknown, b: unknown): boolean {
  try {
    deepStrictEqual(a, b);
    return true;
  } catch {
    return false;
  }
}
