/**
 * Known failure patterns: each with a one-line cause and a one-line fix, attached to a
 * FAIL by the check that has the evidence for it. A check names its pattern by throwing a
 * {@linkcode DiagnosedError} (see {@linkcode diagnosed}); the cell collects the patterns
 * of its failed checks into `CellReport.diagnoses`. Nothing here reads printed text: a
 * pattern is attached where the check holds the typed signal (a count of winners, a
 * classified error, the recorder's log), never recognised in a message afterwards.
 *
 * Children import this module (the busy classification): it has no imports.
 *
 * @example
 * ```ts
 * import { ok } from "node:assert/strict";
 * import { diagnosed, diagnosesOf } from "./diagnoses.ts";
 * const winners: number = 2;
 * try {
 *   diagnosed(winners > 1 && "claim-without-predicate", () => ok(winners === 1, `${winners} won`));
 * } catch (error) {
 *   console.log(diagnosesOf([error])[0]?.fix.startsWith("claim with one")); // true
 * }
 * ```
 *
 * @module
 */
import { isHarnessError } from "../../harness/harness_error.ts";
import { BUSY_REFUSAL } from "../contract/typed.ts";
import type { Diagnosis } from "./report.ts";

/**
 * Every known pattern: its cause and its fix, one line each.
 *
 * @example
 * ```ts
 * import { DIAGNOSES } from "./diagnoses.ts";
 * console.log(DIAGNOSES["delete-full-power-loss"].fix);
 * ```
 */
export const DIAGNOSES = {
  "ack-before-commit": {
    cause:
      "an acknowledged write was missing after a process crash, which keeps every committed transaction: the store acknowledges before its COMMIT (or commits in batches, or at close)",
    fix:
      "return from each write only after its COMMIT returned, one transaction per acknowledged operation",
  },
  "text-changed": {
    cause:
      "a message read back with other text than was appended, or a text refused with an untyped error: the store does not keep text byte for byte (cut at a NUL, as text bound as a C string is; cut at a length limit, such as 65,535 bytes; multi-byte UTF-8 or a line break mangled; white space trimmed)",
    fix:
      "store a message's text as given: bind it with its length in bytes, as UTF-8, in a column or record without a length limit, escaping line breaks in a line-based format; a text the store cannot keep is refused with an error of its own class",
  },
  "role-changed": {
    cause:
      "a message read back in another role than it was appended with: the store does not keep a message's role (a column filled with one role, roles mapped onto fewer, a role lost in a copy)",
    fix:
      "store each message's role as given (system, user, assistant or tool) with its text, copy it with the message in a rotation or a fork, and read it back with the message",
  },
  "identical-write-merged": {
    cause:
      "a write identical to one before it (an append of the same role and text, an obligation of the same content for another message) was acknowledged but not stored as a record of its own: the store takes it for a retry of the first (a unique key on the text, or a hash of it)",
    fix:
      "store every acknowledged write as a record of its own; make retries idempotent with a key the caller gives (an obligation's message reference), never with the text",
  },
  "stale-read": {
    cause:
      "a process that had read a session, reading it again after another process's append to it was acknowledged, did not see the append: the store answers reads from what its own process read or wrote before (a cache kept across calls)",
    fix:
      "read from the database on every call, or drop a cached session whenever the file changed (SQLite's data_version, the file's change counter), so that every process reads every acknowledged write",
  },
  "read-cut": {
    cause:
      "a read of a long session answered part of it (its first or its last messages alone): the store reads one page (a LIMIT of its own, one page of a paginated query) and never the rest, so a resumed session that long loses every message past the page",
    fix:
      "read every page until the store says there is no more (the last key, a cursor), or query a session's messages without a limit",
  },
  "handoff-changed": {
    cause:
      "a rotation's child read back with other messages than were published with it (fewer, more or reordered): the store keeps a handoff otherwise than given (its first message alone, the summary as a column of the session, the messages without their order)",
    fix:
      "insert every message of the handoff, in order, in the transaction that publishes the child, and read them back as the child's messages in id order",
  },
  "claim-without-predicate": {
    cause:
      "several racing processes won the same claim: the write that claims does not test the state it moves from (a SELECT then an UPDATE, or an UPDATE without the state in its WHERE)",
    fix:
      "claim with one UPDATE ... SET handoff_state = 'running' WHERE id = ? AND handoff_state = 'pending' and win only when it changed one row",
  },
  "lock-held-past-crash": {
    cause:
      "the lock of a holder killed while holding it stayed taken: the store frees a dead holder's lock only when its lease expires",
    fix:
      "treat a lock whose holder's pid=<pid> is no longer alive as free, as well as an expired one, in the same transaction that takes it",
  },
  "busy-untyped": {
    cause:
      "a write met SQLITE_BUSY (another process held the write lock) and the raw error escaped to the caller",
    fix:
      "retry the whole transaction (busy_timeout, then a jittered retry up to a deadline), then refuse with an error named BusyDeadlineError that changes nothing",
  },
  "stale-renewal-accepted": {
    cause:
      "a holder renewed its lock after its lease had lapsed (another holder could already take over a lease as long, taken after it): the renewal does not test the lease's expiry, or tests it otherwise than a takeover does",
    fix:
      "renew with one UPDATE ... WHERE holder = ? AND expires_at > <now>, the expiry test a takeover uses",
  },
  "rotation-not-atomic": {
    cause:
      "a crash left a rotation half done (a parent ended without its child, or a child beside a parent still open): the rotation spans two transactions",
    fix:
      "insert the child, its messages and end the parent in one BEGIN IMMEDIATE ... COMMIT, under the lock checked in that transaction",
  },
  "delete-full-power-loss": {
    cause:
      "in DELETE mode with synchronous=FULL the commit point is the journal's unlink, and no folder sync follows it: after a power loss the journal can come back hot and roll back an acknowledged commit",
    fix:
      "PRAGMA synchronous = EXTRA in DELETE mode (it syncs the folder after the unlink), or WAL with synchronous = FULL",
  },
  "unsynced-ack-power-loss": {
    cause:
      "an acknowledgement came while the write it acknowledges was not yet synced (synchronous=NORMAL in WAL mode, or OFF): a power loss drops it",
    fix:
      "PRAGMA synchronous = FULL in WAL mode (EXTRA in DELETE mode), so that each commit is synced before it returns",
  },
  "unsynced-name-power-loss": {
    cause:
      "the store's file was created or renamed into place, and no sync of its folder followed before an acknowledgement: a power loss can lose the name, and every acknowledged write in the file with it",
    fix:
      "sync the folder (open it, fsync, close) after creating or renaming the store's file, before the first acknowledgement",
  },
  "unsynced-rename-power-loss": {
    cause:
      "the store renamed a file onto its own before that file's data was synced: after a power loss the name can hold the new file with its data missing (empty or torn), and every acknowledged write with it",
    fix:
      "sync the new file (fsync) before renaming it into place, then sync the folder before acknowledging",
  },
} as const satisfies Record<string, { cause: string; fix: string }>;

/**
 * A known pattern's id.
 *
 * @example
 * ```ts
 * import type { PatternId } from "./diagnoses.ts";
 * const pattern: PatternId = "busy-untyped";
 * ```
 */
export type PatternId = keyof typeof DIAGNOSES;

/**
 * A failed check that recognised a known pattern in its own evidence. Its message is the
 * check's; the error it wraps is its `cause`.
 *
 * @example
 * ```ts
 * import { DiagnosedError } from "./diagnoses.ts";
 * const error = new DiagnosedError("ack-before-commit", "2 acknowledged append(s) lost");
 * console.log(error.pattern, error.message); // ack-before-commit 2 acknowledged append(s) lost
 * ```
 */
export class DiagnosedError extends Error {
  /** The pattern. */
  readonly pattern: PatternId;

  /** Creates the error. */
  constructor(pattern: PatternId, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "DiagnosedError";
    this.pattern = pattern;
  }
}

function rethrown(pattern: PatternId | false | undefined, error: unknown): unknown {
  // The suite's own failures are never the store's pattern.
  if (isHarnessError(error)) return error;
  if (!pattern || error instanceof DiagnosedError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new DiagnosedError(pattern, message, { cause: error });
}

/**
 * Runs a check; when it throws and `pattern` is set, rethrows its error as a
 * {@linkcode DiagnosedError} of that pattern (same message, the error as `cause`). Pass
 * the pattern only where the check's own data shows it (e.g. `won > 1 &&
 * "claim-without-predicate"`): otherwise `false` or `undefined`, and the error passes
 * unchanged.
 *
 * @param pattern The pattern the evidence shows, or `false`/`undefined`.
 * @param check The check.
 * @returns What the check returned.
 * @example
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { diagnosed } from "./diagnoses.ts";
 * diagnosed("claim-without-predicate", () => strictEqual(1, 1)); // holds: nothing thrown
 * ```
 */
export function diagnosed<T>(pattern: PatternId | false | undefined, check: () => T): T {
  let result: T;
  try {
    result = check();
  } catch (error) {
    throw rethrown(pattern, error);
  }
  if (result instanceof Promise) {
    return result.catch((error) => {
      throw rethrown(pattern, error);
    }) as T;
  }
  return result;
}

/**
 * The patterns in thrown errors (their `cause` chains included), each once, in order.
 *
 * @param errors What the failed checks threw.
 * @returns The pattern ids.
 * @example
 * ```ts
 * import { DiagnosedError, patternsOf } from "./diagnoses.ts";
 * const wrapped = new Error("step", { cause: new DiagnosedError("busy-untyped", "x") });
 * console.log(patternsOf([wrapped, new Error("other")])); // ["busy-untyped"]
 * ```
 */
export function patternsOf(errors: readonly unknown[]): PatternId[] {
  const found: PatternId[] = [];
  for (const error of errors) {
    for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
      const pattern = (e as { pattern?: unknown }).pattern;
      if (
        typeof pattern === "string" && pattern in DIAGNOSES && !found.includes(pattern as PatternId)
      ) {
        found.push(pattern as PatternId);
      }
    }
  }
  return found;
}

/**
 * A pattern's diagnosis: its id, cause and fix.
 *
 * @param pattern The pattern.
 * @returns The diagnosis.
 * @example
 * ```ts
 * import { diagnosis } from "./diagnoses.ts";
 * console.log(diagnosis("lock-held-past-crash").cause.length > 0); // true
 * ```
 */
export function diagnosis(pattern: PatternId): Diagnosis {
  return { pattern, ...DIAGNOSES[pattern] };
}

/**
 * The diagnoses of thrown errors ({@linkcode patternsOf}, then {@linkcode diagnosis}).
 *
 * @param errors What the failed checks threw.
 * @returns The diagnoses, each once.
 * @example
 * ```ts
 * import { DiagnosedError, diagnosesOf } from "./diagnoses.ts";
 * const [d] = diagnosesOf([new DiagnosedError("rotation-not-atomic", "orphan parent-3")]);
 * console.log(`${d?.cause}; fix: ${d?.fix}`);
 * ```
 */
export function diagnosesOf(errors: readonly unknown[]): Diagnosis[] {
  return patternsOf(errors).map(diagnosis);
}

/**
 * The lines a FAIL's message ends with, one per diagnosis:
 * `diagnosis <pattern>: <cause>; fix: <fix>`.
 *
 * @param diagnoses The diagnoses.
 * @returns The lines.
 * @example
 * ```ts
 * import { diagnosis, diagnosisLines } from "./diagnoses.ts";
 * console.log(diagnosisLines([diagnosis("busy-untyped")])[0]?.startsWith("diagnosis busy-untyped: ")); // true
 * ```
 */
export function diagnosisLines(diagnoses: readonly Diagnosis[]): string[] {
  return diagnoses.map((d) => `diagnosis ${d.pattern}: ${d.cause}; fix: ${d.fix}`);
}

/** SQLite's primary result codes for a busy or locked database. */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

/**
 * Whether a store's error is SQLite's busy (or locked) error, read from its typed fields:
 * a numeric result code (`code`, `errcode`, `rawCode`, `resultCode`, extended codes
 * included) or a code name (`SQLITE_BUSY`, `SQLITE_LOCKED`, extended names included); for
 * a store whose errors carry no code (Deno KV's `TypeError`), SQLite's own message for
 * the code (`database is locked`, `database table is locked`). A child classifies the
 * error it caught, where the object is; the parent never reads it from printed text.
 *
 * @param error What the store threw.
 * @returns Whether it is a busy error.
 * @example
 * ```ts
 * import { isBusyError } from "./diagnoses.ts";
 * console.log(isBusyError(Object.assign(new Error("database is locked"), { code: 5 }))); // true
 * console.log(isBusyError(new Error("no such table: sessions"))); // false
 * ```
 */
export function isBusyError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === BUSY_REFUSAL) return false; // the typed refusal itself
  const fields = error as unknown as Record<string, unknown>;
  for (const key of ["code", "errcode", "rawCode", "resultCode", "extendedCode"]) {
    const value = fields[key];
    if (
      typeof value === "number" &&
      ((value & 0xff) === SQLITE_BUSY || (value & 0xff) === SQLITE_LOCKED)
    ) {
      return true;
    }
    if (typeof value === "string" && /^SQLITE_(BUSY|LOCKED)(_|$)/.test(value)) return true;
  }
  return /^(database is locked|database table is locked|database is busy)\b/.test(error.message);
}
