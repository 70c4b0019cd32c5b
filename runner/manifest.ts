/**
 * The expectations manifest: a target's file `<module>.expectations.json` listing the
 * results it is known to get (FAIL with a reason and a link; INTERMITTENT). An expected
 * failure is XFAIL and keeps the run green; an expected failure that passes is XPASS.
 *
 * @example
 * ```ts
 * import { parseManifest } from "./manifest.ts";
 * const manifest = parseManifest("m.json", '{"expectations": [{"cell": 6, "expect": "INTERMITTENT", "reason": "slow disks"}]}');
 * console.log(manifest.entries.length); // 1
 * ```
 *
 * @module
 */
import { CELLS } from "../cells/register.ts";
import { LEGS } from "../harness/legs.ts";
import type { Expectation, Result, TierName } from "./report_schema.ts";
import { TIERS } from "./report_schema.ts";

/**
 * One manifest entry: which results it matches (absent keys match any) and what it expects.
 *
 * @example
 * ```ts
 * import type { ManifestEntry } from "./manifest.ts";
 * const entry: ManifestEntry = { cell: 6, expect: "INTERMITTENT", reason: "busy storms on slow disks" };
 * ```
 */
export interface ManifestEntry extends Expectation {
  /** The cell number (its clause), e.g. `4`. */
  cell?: number;
  /** The fault clause, `F1` to `F5` (the `faults` tier's rows). */
  fault?: string;
  /** The tier. */
  tier?: TierName;
  /** The leg. */
  leg?: string;
  /** The library (`system`, `fixed`, `own`, `none`). */
  library?: string;
}

/**
 * A loaded manifest.
 *
 * @example
 * ```ts
 * import type { Manifest } from "./manifest.ts";
 * const none: Manifest = { path: "my_target.expectations.json", entries: [] };
 * ```
 */
export interface Manifest {
  /** Its path. */
  path: string;
  /** Its entries, in file order (the first that matches a result wins). */
  entries: ManifestEntry[];
}

/** A manifest that cannot be used: a usage error naming the file and the fix. */
export class ManifestError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ManifestError";
  }
}

const KEYS = ["cell", "fault", "tier", "leg", "library", "expect", "reason", "link"];
const FAULTS = ["F1", "F2", "F3", "F4", "F5"];
const LIBRARIES = ["system", "fixed", "own", "none"];

/** The manifest path beside a `file:` target: `<module>.expectations.json`. */
export function manifestPathOf(target: string): string | undefined {
  if (!target.startsWith("file:")) return undefined;
  return decodeURIComponent(new URL(target).pathname).replace(/\.[cm]?[jt]sx?$/, "") +
    ".expectations.json";
}

/**
 * Parses and checks a manifest's text: `{ "expectations": [entry, …] }`.
 *
 * @throws {ManifestError} On unreadable JSON or an unknown cell, tier, leg, library,
 * expectation or key, naming the file, the entry and the fix.
 */
export function parseManifest(path: string, text: string): Manifest {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(
      `Invalid expectations manifest ${path}: not JSON (${
        (error as Error).message
      }): fix the syntax, or delete the file to run without expectations`,
      { cause: error },
    );
  }
  const list = (data as { expectations?: unknown } | null)?.expectations;
  if (typeof data !== "object" || data === null || !Array.isArray(list)) {
    throw new ManifestError(
      `Invalid expectations manifest ${path}: expected an object {"expectations": [...]} (see docs/conformance.md#expectations)`,
    );
  }
  const entries = list.map((raw: unknown, i: number): ManifestEntry => {
    const bad = (what: string): never => {
      throw new ManifestError(
        `Invalid expectations manifest ${path}: entry ${i} ${what} (see docs/conformance.md#expectations)`,
      );
    };
    if (typeof raw !== "object" || raw === null) return bad("is not an object");
    const e = raw as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!KEYS.includes(key)) bad(`has an unknown key "${key}": use ${KEYS.join(", ")}`);
    }
    if (e.cell !== undefined && !(typeof e.cell === "number" && String(e.cell) in CELLS)) {
      bad(`names an unknown cell ${JSON.stringify(e.cell)}: use ${Object.keys(CELLS).join(", ")}`);
    }
    if (e.fault !== undefined && !FAULTS.includes(e.fault as string)) {
      bad(`names an unknown fault clause ${JSON.stringify(e.fault)}: use ${FAULTS.join(", ")}`);
    }
    if (e.tier !== undefined && !TIERS.includes(e.tier as TierName)) {
      bad(`names an unknown tier ${JSON.stringify(e.tier)}: use ${TIERS.join(", ")}`);
    }
    if (e.leg !== undefined && !(LEGS as readonly unknown[]).includes(e.leg)) {
      bad(`names an unknown leg ${JSON.stringify(e.leg)}: use ${LEGS.join(", ")}`);
    }
    if (e.library !== undefined && !LIBRARIES.includes(e.library as string)) {
      bad(`names an unknown library ${JSON.stringify(e.library)}: use ${LIBRARIES.join(", ")}`);
    }
    if (e.expect !== "FAIL" && e.expect !== "INTERMITTENT") {
      bad(`expects ${JSON.stringify(e.expect)}: use "FAIL" or "INTERMITTENT"`);
    }
    if (typeof e.reason !== "string" || !e.reason.trim()) bad("has no reason: say why");
    if (e.link !== undefined && typeof e.link !== "string") bad("has a link that is not a string");
    return e as unknown as ManifestEntry;
  });
  return { path, entries };
}

/**
 * Reads the manifest at `path`; `undefined` when there is none.
 *
 * @param path The manifest's path.
 * @returns The manifest.
 * @throws {ManifestError} When it exists but cannot be read or used.
 * @example
 * ```ts
 * import { readManifest } from "./manifest.ts";
 * console.log(readManifest("/nowhere/target.expectations.json")); // undefined
 * ```
 */
export function readManifest(path: string | undefined): Manifest | undefined {
  if (path === undefined) return undefined;
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw new ManifestError(
      `Cannot read the expectations manifest ${path}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return parseManifest(path, text);
}

function matches(entry: ManifestEntry, result: Result): boolean {
  return (entry.cell === undefined || entry.cell === result.cell) &&
    (entry.fault === undefined ||
      result.tier === "faults" && result.clause.startsWith(`${entry.fault} `)) &&
    (entry.tier === undefined || entry.tier === result.tier) &&
    (entry.leg === undefined || entry.leg === result.leg) &&
    (entry.library === undefined || entry.library === result.library);
}

/**
 * Applies the manifest: a result an entry expects to FAIL is XFAIL when it failed and
 * XPASS when it passed; INTERMITTENT accepts either (a failure is XFAIL, a pass PASS).
 * A SKIP stays a SKIP and an ERROR an ERROR: neither is evidence either way.
 *
 * @param results The observed results.
 * @param manifest The manifest, if any.
 * @returns The results with their status.
 */
export function applyManifest(
  results: readonly Result[],
  manifest: Manifest | undefined,
): Result[] {
  return results.map((result) => {
    const entry = manifest?.entries.find((e) => matches(e, result));
    if (!entry || result.observed === "SKIP" || result.observed === "ERROR") {
      return { ...result, status: result.observed };
    }
    const expectation: Expectation = {
      expect: entry.expect,
      reason: entry.reason,
      ...(entry.link ? { link: entry.link } : {}),
    };
    const status = result.observed === "FAIL"
      ? "XFAIL"
      : entry.expect === "FAIL"
      ? "XPASS"
      : "PASS";
    return { ...result, status, expectation };
  });
}
