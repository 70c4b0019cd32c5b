// How the cells read the value a store answered, per method, so that a store is judged on what
// it says, not on how its driver spells it: integers answered as bigints (libSQL's rowids,
// node:sqlite's readBigInts, better-sqlite3's safe integers) as numbers, which the cells
// compare, sort and journal; a decimal string where the contract has an integer (an int64 as
// protobuf's JSON or a Postgres driver spells it) as that number; a state, an action or a
// message's role named in another case (`PENDING`) as the contract names it; `0` and `1` where
// the contract has a boolean (a message's `active` flag as SQLite stores it, a guarded write's
// rows changed) as `false` and `true`, and a soft delete's `deletedAt` as `active`; each "none"
// as the contract writes it (`undefined` for a missing session, `null` elsewhere, a session's
// field left out or Go's zero value as `null`, no violations as `[]`); a record an ORM hands
// out as an instance of its class as the plain object of its fields, and a field named in
// another case (`parent_session_id`, a row's column) by the contract's name, which every other
// reading then reads. Each reading maps a spelling onto the one meaning the contract gives it,
// so none of them can make a wrong answer right.
import { shownValue } from "./typed.ts";

/**
 * Whether `value` is a record held in an instance of a class (an ORM's entity, a model with
 * getters): an object that is neither plain nor an array nor a built-in value (a `Date`, a
 * `Map`, a typed array, an `Error`, which say so in their tag).
 */
function isInstanceRecord(value: unknown): value is object {
  return value !== null && typeof value === "object" && !isPlain(value) &&
    !Array.isArray(value) && Object.prototype.toString.call(value) === "[object Object]";
}

/** The record in a class instance as a plain object: its own fields and its class's getters. */
function recordOf(instance: object): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(instance)) record[key] = value;
  for (
    let prototype = Object.getPrototypeOf(instance);
    prototype !== null && prototype !== Object.prototype;
    prototype = Object.getPrototypeOf(prototype)
  ) {
    for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(prototype))) {
      if (!descriptor.get || key in record) continue;
      try {
        record[key] = (instance as Record<string, unknown>)[key];
      } catch {
        // A getter that throws gives no field: the record is judged without it.
      }
    }
  }
  return record;
}

/**
 * `value` with each record held in a class instance (an ORM's entity: own fields, or getters
 * of its class) as a plain object of its fields, however deep (a copy only where one was
 * found), so that every reading reads it as the record it is.
 */
export function asPlainRecords(value: unknown): unknown {
  return plainRecords(value, new Set());
}

/** {@linkcode asPlainRecords} below the instances in `within` (an entity's relation back to it). */
function plainRecords(value: unknown, within: Set<object>): unknown {
  if (Array.isArray(value)) return each((element) => plainRecords(element, within))(value);
  const read = (key: string, field: unknown) => [key, plainRecords(field, within)] as const;
  if (isPlain(value)) return mappedFields(value, read);
  if (!isInstanceRecord(value) || within.has(value)) return value;
  within.add(value);
  try {
    return mappedFields(recordOf(value), read);
  } finally {
    within.delete(value);
  }
}

/**
 * A plain object with each field mapped by `map` to a name and a value (a copy only where one
 * changed).
 */
function mappedFields(
  record: Record<string, unknown>,
  map: (key: string, field: unknown) => readonly [string, unknown],
): Record<string, unknown> {
  let changed = false;
  const entries = Object.entries(record).map(([key, field]) => {
    const mapped = map(key, field);
    changed ||= mapped[0] !== key || mapped[1] !== field;
    return mapped;
  });
  return changed ? Object.fromEntries(entries) : record;
}

/**
 * The fields of the contract's records (a message, a session, an obligation, a recovery), by
 * their names folded: lower case, without `_` or `-`.
 */
const CONTRACT_FIELDS: ReadonlyMap<string, string> = new Map(
  [
    "id",
    "role",
    "content",
    "active",
    "parentSessionId",
    "endedAt",
    "endReason",
    "handoffState",
    "obligationId",
    "state",
    "deliveryFence",
    "lastError",
    "obligation",
    "action",
    "idempotencyKey",
    "recoveryMarker",
  ].map((field) => [folded(field), field]),
);

function folded(name: string): string {
  return name.replace(/[_-]/g, "").toLowerCase();
}

/** The contract's names of the field names a store answered, as far as they were asked. */
const renamed = new Map<string, string | undefined>();

/** The contract's name for the field `key` when `key` spells it otherwise (`ended_at`). */
function contractName(key: string): string | undefined {
  if (renamed.has(key)) return renamed.get(key);
  const field = CONTRACT_FIELDS.get(folded(key));
  const name = field === key ? undefined : field;
  // Remembered up to a bound: a store's field names come from its code, but a record keyed
  // by its data would grow the map without one.
  if (renamed.size < 1_000) renamed.set(key, name);
  return name;
}

/**
 * `value` with each field that spells a contract record's field in another case
 * (`parent_session_id` as a row's column, `ParentSessionId` as C#'s JSON, `ID` as Go's)
 * named as the contract names it, however deep, unless the record has that name too (a copy
 * only where one was found).
 */
export function asContractNames(value: unknown): unknown {
  if (Array.isArray(value)) return each(asContractNames)(value);
  if (!isPlain(value)) return value;
  return mappedFields(value, (key, field) => {
    const name = contractName(key);
    return [name !== undefined && !(name in value) ? name : key, asContractNames(field)];
  });
}

function isPlain(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** `value` with each safe-integer bigint as a number (a copy only where one was found). */
export function asNumbers(value: unknown): unknown {
  if (typeof value === "bigint") {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value;
  }
  if (Array.isArray(value)) return each(asNumbers)(value);
  return isPlain(value) ? mappedFields(value, (key, field) => [key, asNumbers(field)]) : value;
}

/**
 * A string that spells a safe integer in decimal, as written (`"42"`, `"-3"`; not `"042"`,
 * `"4.0"` or `" 4"`), as that number; anything else unchanged.
 */
export function asInteger(value: unknown): unknown {
  if (typeof value !== "string" || !/^-?(0|[1-9][0-9]{0,15})$/.test(value)) return value;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

/**
 * A reading of the contract's names for one thing (states, actions): a name in another case
 * (`PENDING` as Java's enums, `Pending` as Rust's serialise) as the contract writes it;
 * anything else unchanged.
 */
export function namesOf(names: readonly string[]): (value: unknown) => unknown {
  const known = new Set(names);
  return (value) => {
    if (typeof value !== "string") return value;
    const lower = value.toLowerCase();
    return lower !== value && known.has(lower) ? lower : value;
  };
}

const handoffState = namesOf(["pending", "running", "completed", "failed"]);
const obligationState = namesOf([
  "pending",
  "attempting",
  "delivered",
  "failed",
  "unknown",
  "abandoned",
]);
const recoveryAction = namesOf(["send", "resend", "unknown"]);
const messageRole = namesOf(["system", "user", "assistant", "tool"]);
/** The reason a store writes itself when a rotation ends a parent (any other is the caller's). */
const rotationReason = namesOf(["compression"]);

/** `1` as `true` and `0` as `false` (after {@linkcode asNumbers}); anything else unchanged. */
function asBoolean(answer: unknown): unknown {
  return answer === 1 ? true : answer === 0 ? false : answer;
}

type Read = (value: unknown) => unknown;

/** Each element of an array read by `read` (a copy only where one changed); else `value`. */
function each(read: Read): Read {
  return (value) => {
    if (!Array.isArray(value)) return value;
    const read_ = value.map(read);
    return read_.some((element, i) => element !== value[i]) ? read_ : value;
  };
}

/**
 * A plain object with each field of `fields` it has read by its reading (a copy only where
 * one changed); anything else unchanged (a record in a class instance is plain by then).
 */
function withFields(fields: Readonly<Record<string, Read>>): Read {
  return (record) => {
    if (!isPlain(record)) return record;
    let copy: Record<string, unknown> | undefined;
    for (const [field, read] of Object.entries(fields)) {
      if (!(field in record)) continue;
      const value = read(record[field]);
      if (value !== record[field]) (copy ??= { ...record })[field] = value;
    }
    return copy ?? record;
  };
}

/**
 * A session's fields whose "none" is `null`, each with the zero value that says none too: a
 * Go struct's empty string and `0` (as its JSON spells a field with no value), a `NOT NULL`
 * column's default. No session has an empty id for a parent, ends at the epoch, or is in a
 * handoff state with no name.
 */
const SESSION_NONE_FIELDS = {
  parentSessionId: "",
  endedAt: 0,
  endReason: "",
  handoffState: "",
} as const;

type SessionNoneField = keyof typeof SESSION_NONE_FIELDS;
const SESSION_NONE_NAMES = Object.keys(SESSION_NONE_FIELDS) as SessionNoneField[];

/** Whether `value` is Go's zero `time.Time` as its JSON spells it (`0001-01-01T00:00:00Z`). */
function isZeroTime(value: unknown): boolean {
  return typeof value === "string" && /^0001-01-01T00:00:00(?:\.0+)?(?:Z|[+-]00:00)$/.test(value);
}

/** Whether a session's `field` holding `value` says none: left out, or its zero value. */
function saysNone(field: SessionNoneField, value: unknown): boolean {
  return value === undefined || value === SESSION_NONE_FIELDS[field] ||
    (field === "endedAt" && (asInteger(value) === 0 || isZeroTime(value)));
}

/**
 * A session with each field whose "none" is `null` that it leaves out, or zeroes, as `null` (a
 * copy only where one changed).
 */
function sessionNone(session: unknown): unknown {
  if (!isPlain(session)) return session;
  let filled: Record<string, unknown> | undefined;
  for (const field of SESSION_NONE_NAMES) {
    if (session[field] !== null && saysNone(field, session[field])) {
      (filled ??= { ...session })[field] = null;
    }
  }
  return filled ?? session;
}

const sessionFields = withFields({ endedAt: asInteger, handoffState, endReason: rotationReason });

/**
 * A session, or an array of them, as the cells read it: each field whose "none" is `null`
 * that it leaves out (a store of plain objects, JSON that omits empty fields) or spells by its
 * zero value (`""`, `0`: a Go struct's JSON) as `null`, its
 * `endedAt` as a number, its `handoffState` and a rotation's `endReason` as the contract names
 * them; a copy only where one changed.
 */
export function readSessions(sessions: unknown): unknown {
  const one = (session: unknown) => sessionFields(sessionNone(session));
  return Array.isArray(sessions) ? each(one)(sessions) : one(sessions);
}

/** A soft delete's "not deleted": nothing, or a zero value (`0`, `""`, Go's zero time). */
function notDeleted(value: unknown): boolean {
  return value === null || value === undefined || value === 0 || value === "" ||
    value === false || isZeroTime(value);
}

/**
 * How a message without `active` says whether it is active, by its fields' folded names: an
 * `isActive` flag as it is, a soft delete's `deletedAt` (TypeORM's, GORM's, Rails'
 * `deleted_at`) active while it has no time, a `deleted` or `isDeleted` flag inverted.
 */
const ACTIVE_SPELLINGS: ReadonlyMap<string, (value: unknown) => unknown> = new Map([
  ["isactive", (value: unknown) => asBoolean(value)],
  ["deletedat", notDeleted],
  ["deleted", notDeleted],
  ["isdeleted", notDeleted],
]);

/** A message that says whether it is active otherwise than by `active`, with `active` too. */
function activeSpelled(message: unknown): unknown {
  if (!isPlain(message) || "active" in message) return message;
  for (const [key, value] of Object.entries(message)) {
    const spelling = ACTIVE_SPELLINGS.get(folded(key));
    if (spelling) return { ...message, active: spelling(value) };
  }
  return message;
}

const messageFields = withFields({ id: asInteger, active: asBoolean, role: messageRole });

/**
 * Messages as the cells read them: an `active` flag of `0` or `1` (how SQLite stores a
 * boolean, and how a row of `node:sqlite`, better-sqlite3 or libSQL hands it out) as `false`
 * or `true`, or said by a soft delete's field (`deletedAt`, `isDeleted`) or `isActive`, an `id`
 * spelled in decimal as a number, a `role` in another case (`USER`, an enum serialised by
 * name) as the contract names it; anything else unchanged (a copy only where one changed).
 */
export const readMessages: Read = each((message) => messageFields(activeSpelled(message)));

const obligation = withFields({
  deliveryFence: asInteger,
  state: obligationState,
  // An error recorded as the empty string is none: every failure the cells book has a reason.
  lastError: (value) => value === "" ? null : value,
});

/**
 * What `checkInvariants` answered, as its list of violations: `undefined`, `null` or `""` (a
 * store that reports only when something is wrong) as `[]`, one string as a list of it; any other
 * answer that is not a list is itself a violation, named (never read as "all hold").
 */
export function asViolations(answer: unknown): unknown {
  if (answer === undefined || answer === null || answer === "") return [];
  if (typeof answer === "string") return [answer];
  if (Array.isArray(answer)) return answer;
  return [`checkInvariants answered ${shownValue(answer)}, not a list of violations`];
}

/** The methods whose "none" is `undefined`: a store whose driver answers `null` means it too. */
export const NONE_IS_UNDEFINED: ReadonlySet<PropertyKey> = new Set([
  "getSession",
  "getObligation",
  "findLiveCompressionChild",
]);

/**
 * The methods whose "none" is `null`, each with the answers that mean it too: `undefined` (no
 * row), and a handoff state's empty string (a Go string's zero value, a column's default).
 */
const NONE_IS_NULL: ReadonlyMap<PropertyKey, ReadonlySet<unknown>> = new Map([
  ["markAttempting", new Set([undefined])],
  ["getHandoffState", new Set([undefined, ""])],
]);

/**
 * Whether a record answered where the contract's none is `undefined` is a zero value (a Go
 * struct with nothing in it, its id empty) rather than a record: no record has an empty id.
 */
function isZeroRecord(answer: unknown): boolean {
  return isPlain(answer) && (answer.id === "" || answer.obligationId === "");
}

/**
 * The methods whose answer is a boolean: a store that answers the rows its write changed
 * (`changes()` of `node:sqlite` or better-sqlite3, Python's `rowcount`) says `true` with `1`
 * and `false` with `0`.
 */
const BOOLEAN_ANSWERS = [
  "requestHandoff",
  "claimHandoff",
  "completeHandoff",
  "failHandoff",
  "tryAcquireCompressionLock",
  "releaseCompressionLock",
  "markDelivered",
  "markFailed",
  "markUnknown",
  "endSession",
  "reopenSession",
  "refreshCompressionLock",
  "reopenOrphanedCompressionSession",
] as const;

/**
 * How each method's answer is read, after {@linkcode asPlainRecords},
 * {@linkcode asContractNames} and {@linkcode asNumbers}, beyond the none.
 */
const READINGS: ReadonlyMap<PropertyKey, Read> = new Map<PropertyKey, Read>([
  ...BOOLEAN_ANSWERS.map((key): [PropertyKey, Read] => [key, asBoolean]),
  ["getMessages", readMessages],
  ["appendMessage", asInteger],
  ["appendMessages", each(asInteger)],
  ["rewindToMessage", asInteger],
  ["messageCount", asInteger],
  ["markAttempting", asInteger],
  ["getSession", readSessions],
  ["listSessions", readSessions],
  ["findLiveCompressionChild", readSessions],
  ["listPendingHandoffs", readSessions],
  ["recordObligation", obligation],
  ["getObligation", obligation],
  ["listObligations", each(obligation)],
  ["sweepRecoverable", each(withFields({ obligation, action: recoveryAction }))],
  ["getHandoffState", handoffState],
]);

/**
 * How the answers of the method `key` are read: records held in class instances as plain
 * objects, their fields by the contract's names, bigints as numbers, its "none" as the
 * contract's, then its own reading.
 *
 * @param key The method's name.
 * @returns The reading of its answers.
 */
export function readerOf(key: PropertyKey): Read {
  const plain = (answer: unknown) => asNumbers(asContractNames(asPlainRecords(answer)));
  if (key === "checkInvariants") return (answer) => asViolations(plain(answer));
  const reading = READINGS.get(key);
  const nulls = NONE_IS_NULL.get(key);
  const none = NONE_IS_UNDEFINED.has(key)
    ? (answer: unknown) => answer === null || isZeroRecord(answer) ? undefined : answer
    : nulls
    ? (answer: unknown) => nulls.has(answer) ? null : answer
    : undefined;
  if (!reading && !none) return plain;
  return (answer) => {
    const value = none ? none(plain(answer)) : plain(answer);
    return reading && value !== undefined && value !== null ? reading(value) : value;
  };
}
