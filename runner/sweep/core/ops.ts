// The crash sweep's operations: what each calls and needs, the programs that own each
// crash point, the fixed programs of the clauses whose operations are not in the bounded
// sequences, and what a fresh process continues a recovered state with.

/** The operations of the bounded sequences (issue 8), in enumeration order. */
export const SEQUENCE_OPS = [
  "append",
  "batch",
  "rotate",
  "rewind",
  "fork",
  "claim",
  "outbox",
] as const;

/** An operation of a bounded sequence; `outbox` is one outbox step. */
export type SequenceOp = typeof SEQUENCE_OPS[number];

/**
 * An operation a program runs: one store write (plus its lock, for `rotate` and the
 * first `refresh`). `end`, `reopen`, `ensure` act on the session `ens`; `refresh` renews
 * the lease its program took on `main`; `request` parks a handoff of a seeded session
 * with messages; `ghost` asks for an append to a missing session (a refusal).
 */
export type ProgramOp =
  | Exclude<SequenceOp, "outbox">
  | "record"
  | "attempt"
  | "deliver"
  | "fail"
  | "unknown"
  | "sweep"
  | "end"
  | "reopen"
  | "ensure"
  | "refresh"
  | "request"
  | "ghost";

/** The store methods each operation calls; a crash point `<method>:*` belongs to them. */
export const OP_METHODS: Record<ProgramOp, readonly string[]> = {
  append: ["appendMessage"],
  batch: ["appendMessages"],
  rotate: ["tryAcquireCompressionLock", "publishCompressionChild", "releaseCompressionLock"],
  rewind: ["rewindToMessage"],
  fork: ["forkSession"],
  claim: ["claimHandoff"],
  record: ["recordObligation"],
  attempt: ["markAttempting"],
  deliver: ["markDelivered"],
  fail: ["markFailed"],
  unknown: ["markUnknown"],
  sweep: ["sweepRecoverable"],
  end: ["endSession"],
  reopen: ["reopenSession"],
  ensure: ["ensureSession"],
  refresh: ["refreshCompressionLock"],
  request: ["requestHandoff"],
  ghost: [],
};

/** The other methods an operation needs: the seeded state and the snapshot. */
const OP_NEEDS: Record<ProgramOp, readonly string[]> = {
  append: [],
  batch: [],
  rotate: ["listSessions"],
  rewind: [],
  fork: ["listSessions"],
  claim: ["requestHandoff"],
  record: ["listObligations"],
  attempt: ["recordObligation", "listObligations"],
  deliver: ["recordObligation", "markAttempting", "listObligations"],
  fail: ["recordObligation", "listObligations"],
  unknown: ["recordObligation", "markAttempting", "listObligations"],
  sweep: ["recordObligation", "markAttempting", "listObligations"],
  // A session's end is read back by `getSession` (or `listSessions`): required, so it is said.
  end: ["ensureSession", "getSession"],
  reopen: ["ensureSession", "endSession", "getSession"],
  ensure: ["getSession"],
  refresh: ["tryAcquireCompressionLock"],
  request: ["listPendingHandoffs", "getHandoffState"],
  // A refused write must change nothing: a session it made must be readable.
  ghost: ["getSession"],
};

/**
 * Methods every program needs: to seed the store and read its state back (a store
 * without `listSessions` is read by the sessions its programs name: cell 1's methods
 * are enough for the append programs).
 */
export const BASE_METHODS = [
  "createSession",
  "appendMessage",
  "getMessages",
  "close",
] as const;

/** Messages per batch append (so `appendMessages:afterInsert` is reached twice a call). */
export const BATCH_SIZE = 2;

/** Obligations a dead process leaves for the `sweep` program (two pending, two attempting). */
export const DEAD_OWNER_OBLIGATIONS = 4;

/** Handoffs parked in the seeded store, one per `claim` (a program claims at most 3). */
export const PARKED_HANDOFFS = 3;

/** Sessions with messages seeded for `request` (a program requests at most 3). */
export const REQUESTABLE = 3;

/**
 * The fixed programs of the operations outside the bounded sequences (cells 10 to 13:
 * their space would multiply the sequences'), each run when the store has its methods.
 * Cell 8 is judged on the rotation programs, cell 9 on the batch ones.
 */
export const CLAUSE_PROGRAMS: readonly (readonly ProgramOp[])[] = [
  ["ensure", "ensure"],
  ["ensure", "end", "reopen"],
  ["ensure", "end", "end"],
  ["refresh", "refresh"],
  ["request", "claim"],
  ["claim", "request"],
  ["ghost"],
  ["append", "ghost"],
];

const thrice = (...ops: ProgramOp[]): ProgramOp[] => [...ops, ...ops, ...ops];

/**
 * The program that owns the crash points of a method: its operation three times (so
 * `@3` is reachable), each after what it needs. `sweep` takes over obligations of a dead
 * process, so its run starts from a store a short-lived child left behind; the first
 * takeover takes all four at once (its `afterClaim` is reached four times), so the second
 * and third find nothing, and their states check that an empty takeover changes nothing.
 */
export const POINT_PROGRAMS: Record<string, readonly ProgramOp[]> = {
  appendMessage: thrice("append"),
  appendMessages: thrice("batch"),
  claimHandoff: thrice("claim"),
  tryAcquireCompressionLock: thrice("rotate"),
  publishCompressionChild: thrice("rotate"),
  releaseCompressionLock: thrice("rotate"),
  rewindToMessage: thrice("rewind"),
  forkSession: thrice("fork"),
  recordObligation: thrice("record"),
  markAttempting: thrice("record", "attempt"),
  markDelivered: thrice("record", "attempt", "deliver"),
  markFailed: thrice("record", "fail"),
  markUnknown: thrice("record", "attempt", "unknown"),
  sweepRecoverable: thrice("sweep"),
  endSession: ["ensure", ...thrice("end", "reopen")],
  reopenSession: ["ensure", ...thrice("end", "reopen")],
  ensureSession: thrice("ensure"),
  refreshCompressionLock: thrice("refresh"),
  requestHandoff: thrice("request"),
};

/** The method a crash point belongs to: the part before the colon. */
export function methodOf(point: string): string {
  return point.slice(0, point.indexOf(":"));
}

/** Whether an operation owns a crash point (it calls the point's method). */
export function owns(op: ProgramOp, point: string): boolean {
  return OP_METHODS[op].includes(methodOf(point));
}

/** Whether a program starts from obligations of a dead process. */
export function needsDeadOwner(program: readonly ProgramOp[]): boolean {
  return program.includes("sweep");
}

/**
 * The store methods a program needs that the store lacks.
 *
 * @param program The operations.
 * @param methods The store's methods.
 * @returns The missing names.
 */
export function missingMethods(
  program: readonly ProgramOp[],
  methods: readonly string[],
): string[] {
  const needed = new Set<string>(BASE_METHODS);
  for (const op of program) {
    for (const m of [...OP_METHODS[op], ...OP_NEEDS[op]]) needed.add(m);
  }
  return [...needed].filter((m) => !methods.includes(m));
}

/**
 * Expands a bounded sequence into the program that runs it: the n-th outbox step is the
 * next move of the sender protocol (record, then attempt, then deliver).
 *
 * @param sequence The sequence.
 * @returns The program.
 */
export function expandSequence(sequence: readonly SequenceOp[]): ProgramOp[] {
  const protocol: ProgramOp[] = ["record", "attempt", "deliver"];
  let steps = 0;
  return sequence.map((op) => op === "outbox" ? protocol[steps++ % protocol.length]! : op);
}

/**
 * How many times one call of `op` reaches `point`: once per call for every point of
 * its methods, except the per-row points (a batch inserts `BATCH_SIZE` rows; the sweep
 * takes over `DEAD_OWNER_OBLIGATIONS` on its first call, none after). The sweep checks
 * this model on every state: the child must die in the operation it predicts.
 *
 * @param op The operation.
 * @param point The crash point.
 * @param call Which call of `op` in the program (0-based), for the sweep.
 * @returns The number of hits.
 */
export function hitsPerCall(op: ProgramOp, point: string, call = 0): number {
  if (!owns(op, point)) return 0;
  if (point === "appendMessages:afterInsert") return BATCH_SIZE;
  if (point === "sweepRecoverable:afterClaim") return call === 0 ? DEAD_OWNER_OBLIGATIONS : 0;
  return 1;
}

/**
 * What a fresh process does on a recovered state to show that it takes the clause's
 * own operation (resume after recovery): the operation the crash interrupted again (an
 * outbox step: a whole new obligation, recorded, attempted and delivered; a claim, when
 * a parked handoff is left), then an append, each as far as the store has the methods.
 * A takeover (`sweep`) is not repeated: what it takes depends on whose process is alive.
 *
 * @param op The interrupted operation.
 * @param methods The store's methods.
 * @returns The operations, always at least one append.
 * @example
 * ```ts
 * import { continuation } from "./program.ts";
 * console.log(continuation("rotate", ["listSessions", "tryAcquireCompressionLock"])); // ["append"]
 * ```
 */
export function continuation(op: ProgramOp, methods: readonly string[]): ProgramOp[] {
  const own: Record<ProgramOp, ProgramOp[]> = {
    append: ["append"],
    batch: ["batch"],
    rotate: ["rotate"],
    rewind: ["rewind"],
    fork: ["fork"],
    claim: ["claim"],
    record: ["record", "attempt", "deliver"],
    attempt: ["record", "attempt", "deliver"],
    deliver: ["record", "attempt", "deliver"],
    fail: ["record", "fail"],
    unknown: ["record", "attempt", "unknown"],
    sweep: [],
    end: ["reopen", "end"],
    reopen: ["end", "reopen"],
    ensure: ["ensure"],
    refresh: ["refresh"],
    request: ["request"],
    ghost: ["ghost"],
  };
  const ops = [...own[op], "append" as const];
  return missingMethods(ops, methods).length ? ["append"] : ops;
}

/** The first index of the continuation's operations: names apart from the program's. */
export const CONTINUATION_INDEX = 100;

/**
 * Parses a program written as operation names joined by `+`.
 *
 * @param spec E.g. `append+rotate+fork`.
 * @returns The operations.
 * @throws {Error} On an unknown operation.
 */
export function parseProgram(spec: string): ProgramOp[] {
  return spec.split("+").map((name) => {
    if (!(name in OP_METHODS)) {
      throw new Error(
        `Unknown sweep operation "${name}": use one of ${Object.keys(OP_METHODS).join(", ")}`,
      );
    }
    return name as ProgramOp;
  });
}
