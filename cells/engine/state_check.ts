// What a clause's judge says about one recovered state, in a form both tiers consume:
// the SIGKILL cell makes one step per check (everything must hold), the power-loss cell
// collects the violations of every crash state and counts the acknowledged work lost
// (which fails only the states a power loss must keep whole).
import { ok } from "node:assert/strict";
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import { diagnosed, type PatternId } from "./diagnoses.ts";

/** One check of a recovered state, named as the SIGKILL cell's step. */
export interface StateCheck {
  /** The step's name. */
  name: string;
  /** Rules broken: wrong in any state a crash may leave. */
  violations: string[];
  /** Acknowledged work absent: wrong only where every acknowledged operation must be. */
  missing: string[];
  /** The known failure pattern this check's failure shows (its cause and fix are reported). */
  pattern?: PatternId;
}

/** How many problems a failed step lists; the rest are counted. */
const LISTED = 10;

/** `problems` joined, the first {@linkcode LISTED} of them and how many more. */
function listed(problems: readonly string[]): string {
  const more = problems.length - LISTED;
  return problems.slice(0, LISTED).join("; ") + (more > 0 ? `; and ${more} more` : "");
}

/** Runs one step per check; a step fails on any violation or missing work. */
export async function checkSteps(
  t: Deno.TestContext,
  checks: readonly StateCheck[],
  prefix = "",
): Promise<void> {
  for (const check of checks) {
    await t.step(`${prefix}${check.name}`, () => {
      const problems = [...check.violations, ...check.missing];
      diagnosed(check.pattern, () => ok(problems.length === 0, listed(problems)));
    });
  }
}

/** Every violation of the checks, in order (missing work aside). */
export function violationsOf(checks: readonly StateCheck[]): string[] {
  return checks.flatMap((check) => check.violations);
}

/** Why two recovery passes are not the same (`null` when they are). */
export function passesDiffer(first: unknown, second: unknown): string | null {
  const a = JSON.stringify(first);
  const b = JSON.stringify(second);
  if (a === b) return null;
  let at = 0;
  while (a[at] === b[at]) at++;
  const from = Math.max(0, at - 40);
  return `two recovery passes differ: first …${a.slice(from, at + 80)}, second …${
    b.slice(from, at + 80)
  }`;
}

/**
 * A check with no acknowledged work to miss: its name and its violations.
 *
 * @param name The check's name.
 * @param violations What breaks it.
 * @returns The check.
 * @example
 * ```ts
 * import { checkOf } from "./state_check.ts";
 * console.log(checkOf("no stray rows", [])); // { name: "no stray rows", violations: [], missing: [] }
 * ```
 */
export function checkOf(name: string, violations: string[]): StateCheck {
  return { name, violations, missing: [] };
}

/**
 * What every recovered file must show whatever the clause: two recovery passes that read
 * the same, `integrity_check` ok, no violation of the store's own invariants.
 *
 * @param db The recovered file.
 * @param passes What the two recovery passes read.
 * @param invariants The store's invariant violations, as the first pass read them.
 * @returns The violations, empty when the file is sound.
 * @example
 * ```ts ignore
 * const [first, second] = [await recover(db), await recover(db)];
 * const violations = soundness(db, [first, second], first.invariants);
 * ```
 */
export function soundness(
  db: string,
  passes: readonly [unknown, unknown],
  invariants: readonly string[],
): string[] {
  const differ = passesDiffer(passes[0], passes[1]);
  const integrity = integrityIfSqlite(db);
  return [
    ...(differ ? [differ] : []),
    ...(integrity === undefined || integrity === "ok" ? [] : [`integrity_check: ${integrity}`]),
    ...invariants.map((p) => `invariant: ${p}`),
  ];
}

/** A clause's verdict on one recovered file, as the power-loss tier counts it. */
export interface StateJudgement {
  /** Acknowledged operations missing. */
  lost: number;
  /** The checks. */
  checks: StateCheck[];
}
