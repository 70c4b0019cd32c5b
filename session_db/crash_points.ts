import { CrashPointError } from "./errors.ts";
import { killSelf } from "./process.ts";

/**
 * The crash points of the reference store, one per statement boundary.
 *
 * @example
 * ```ts
 * import { STORE_CRASH_POINTS } from "./crash_points.ts";
 * const commits = STORE_CRASH_POINTS.filter((point) => point.endsWith(":afterCommit"));
 * console.log(commits.includes("appendMessage:afterCommit")); // true
 * ```
 */
export const STORE_CRASH_POINTS = [
  "appendMessage:afterInsert",
  "appendMessage:afterCount",
  "appendMessage:afterCommit",
  "appendMessages:afterInsert",
  "appendMessages:afterCount",
  "appendMessages:afterCommit",
  "claimHandoff:afterUpdate",
  "claimHandoff:afterCommit",
  "publishCompressionChild:afterVerify",
  "publishCompressionChild:afterChildInsert",
  "publishCompressionChild:afterMessages",
  "publishCompressionChild:afterParentEnd",
  "publishCompressionChild:afterCommit",
  "rewindToMessage:afterVerify",
  "rewindToMessage:afterDeactivate",
  "rewindToMessage:afterCount",
  "rewindToMessage:afterCommit",
  "forkSession:afterCreate",
  "forkSession:afterCopy",
  "forkSession:afterCount",
  "forkSession:afterCommit",
  "recordObligation:afterInsert",
  "recordObligation:afterCommit",
  "markAttempting:afterUpdate",
  "markAttempting:afterCommit",
  "markDelivered:afterUpdate",
  "markDelivered:afterCommit",
  "markFailed:afterCommit",
  "markUnknown:afterCommit",
  "sweepRecoverable:afterClaim",
  "sweepRecoverable:afterCommit",
] as const;

/**
 * The name of a crash point of the reference store.
 *
 * @example
 * ```ts
 * import type { CrashPointName } from "./crash_points.ts";
 * const point: CrashPointName = "publishCompressionChild:afterChildInsert";
 * const env = { SESSION_DB_CRASH_AT: `${point}@2` }; // a child dies at the second hit
 * console.log(env.SESSION_DB_CRASH_AT);
 * ```
 */
export type CrashPointName = typeof STORE_CRASH_POINTS[number];

const known = new Set<string>(STORE_CRASH_POINTS);
const hits = new Map<string, number>();
let armed: { name: string; occurrence: number } | null | undefined;

/**
 * Every crash point name: the store's, then any added by {@linkcode defineCrashPoints}.
 *
 * @returns The names, in declaration order.
 * @example
 * ```ts
 * import { crashPoints } from "./crash_points.ts";
 * console.log(crashPoints().includes("publishCompressionChild:afterChildInsert")); // true
 * ```
 */
export function crashPoints(): string[] {
  return [...known];
}

/**
 * Adds crash points owned by a caller (for example a cell's child at the
 * application level), so that `SESSION_DB_CRASH_AT` may name them.
 *
 * @param names New point names, `<operation>:<moment>`.
 * @example
 * ```ts
 * import { defineCrashPoints } from "./crash_points.ts";
 * defineCrashPoints(["sender:afterSend"]);
 * ```
 */
export function defineCrashPoints(names: readonly string[]): void {
  for (const name of names) known.add(name);
}

function readSpec(): string | undefined {
  try {
    return Deno.env.get("SESSION_DB_CRASH_AT") || undefined;
  } catch {
    return undefined; // no env permission: nothing is armed
  }
}

/**
 * Parses `SESSION_DB_CRASH_AT=<point>[@<k>]` and checks the name; called at open. A point
 * of an operation the store does not have is not its business: nothing is armed.
 *
 * @returns The armed point, or `null` when unset or another's.
 * @throws {CrashPointError} On an unknown moment of the store's own operation, a malformed
 * spec or a bad occurrence.
 * @example
 * ```ts
 * import { armedCrashPoint } from "./crash_points.ts";
 * console.log(armedCrashPoint()); // null unless SESSION_DB_CRASH_AT is set
 * ```
 */
export function armedCrashPoint(): { name: string; occurrence: number } | null {
  if (armed !== undefined) return armed;
  const spec = readSpec();
  if (!spec) return armed = null;
  const match = /^([A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+)(?:@(\d+))?$/.exec(spec);
  if (!match) {
    throw new CrashPointError(
      `Invalid SESSION_DB_CRASH_AT "${spec}": use <point>[@<k>], e.g. appendMessage:afterInsert@3`,
    );
  }
  const name = match[1]!;
  const occurrence = match[2] === undefined ? 1 : Number(match[2]);
  if (!known.has(name)) {
    // A point of an operation this store does not have is another's (a cell's child owns
    // `sender:afterSend`, and its copy of this module may not be the store's: a store in a
    // worker): not armed here. One of the store's own operations must name a moment it has.
    const operation = name.slice(0, name.indexOf(":") + 1);
    if (![...known].some((point) => point.startsWith(operation))) return armed = null;
    throw new CrashPointError(
      `Unknown crash point "${name}" in SESSION_DB_CRASH_AT: use one of ${
        crashPoints().join(", ")
      }`,
    );
  }
  if (occurrence < 1) {
    throw new CrashPointError(`Invalid SESSION_DB_CRASH_AT "${spec}": k counts from 1`);
  }
  return armed = { name, occurrence };
}

/**
 * Marks a crash point: when `SESSION_DB_CRASH_AT` names it, the process kills itself
 * with SIGKILL the k-th time it gets here. Costs one comparison when unarmed.
 *
 * @param name The point's name.
 * @example
 * ```ts
 * import { crashPoint } from "./crash_points.ts";
 * crashPoint("appendMessage:afterInsert"); // returns unless armed for it
 * ```
 */
export function crashPoint(name: string): void {
  const target = armed === undefined ? armedCrashPoint() : armed;
  if (target === null || target.name !== name) return;
  const count = (hits.get(name) ?? 0) + 1;
  hits.set(name, count);
  if (count === target.occurrence) killSelf();
}
