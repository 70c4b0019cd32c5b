// The fault tier's shared vocabulary: what every clause takes and what it returns. The
// tier (`tier.ts`) turns a verdict into a report row on its leg × library.
import type { SkipKind, Status } from "../engine/report.ts";
import type { Leg } from "../../harness/legs.ts";
import type { ChildPermissions } from "../../harness/permissions.ts";

/**
 * The fault clauses, by id.
 *
 * @example
 * ```ts
 * import type { FaultClauseId } from "./types.ts";
 * const only: FaultClauseId[] = ["F1", "F2"]; // injected errors and corruption
 * ```
 */
export type FaultClauseId = "F1" | "F2" | "F3" | "F4" | "F5";

/**
 * What one fault clause gets.
 *
 * @example
 * ```ts
 * import type { FaultClauseOptions } from "./types.ts";
 * const options: FaultClauseOptions = {
 *   target: "file:///repo/my_target.ts",
 *   leg: { name: "wal", library: "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0", sqliteVersion: "3.46.1" },
 *   seed: 1,
 *   quick: true,
 *   dir: "/tmp/f1",
 *   recorder: { skip: "no C compiler: install cc" },
 * };
 * ```
 */
export interface FaultClauseOptions {
  /** The target module's specifier (a `file:` URL or a path). */
  target: string;
  /** The journal-mode leg and the SQLite library its children load. */
  leg: Leg;
  /** The seed of every random choice (a sampled run, message texts). */
  seed: number;
  /** Fewer calls, processes and states: the slice CI runs. */
  quick: boolean;
  /** A folder of the clause's own for its runs; what a FAIL leaves there is its evidence. */
  dir: string;
  /** The recorder's library, or why it cannot be built here (then recorder clauses SKIP). */
  recorder: { path: string } | { skip: string };
  /** The extra permissions the target declares for its children. */
  permissions?: ChildPermissions;
}

/**
 * What one fault clause found on one leg.
 *
 * @example
 * ```ts
 * import type { FaultVerdict } from "./types.ts";
 * const lost: FaultVerdict = {
 *   status: "FAIL",
 *   checks: ['fsync EIO at call 3 (…): after a power loss (state 1): acknowledged "m4" is lost'],
 *   judged: 127,
 * };
 * ```
 */
export interface FaultVerdict {
  /** PASS, FAIL, SKIP (with the reason and the fix), or ERROR (the suite failed). */
  status: Status;
  /** Why it failed, erred or was skipped. */
  reason?: string;
  /** A SKIP's kind, when a reader acts on it. */
  skipKind?: SkipKind;
  /** The failed checks, one line each, naming the call or the state that broke the clause. */
  checks?: string[];
  /** How many runs, calls or states were judged (0 is never a PASS). */
  judged: number;
  /** The evidence figures (counts, the calls injected, timings). */
  figures?: Record<string, unknown>;
  /** The command that replays it. */
  replay?: string;
}

/**
 * A fault clause: its id, its name in the report, and its run on one leg.
 *
 * @example
 * ```ts
 * import type { FaultClause } from "./types.ts";
 * const never: FaultClause = {
 *   id: "F5",
 *   name: "F5 short-lived processes",
 *   run: () => Promise.resolve({ status: "SKIP", reason: "an example", judged: 0 }),
 * };
 * ```
 */
export interface FaultClause {
  /** `F1` to `F5`. */
  id: FaultClauseId;
  /** The report's clause name, e.g. `F1 injected errors`. */
  name: string;
  /** Runs the clause on one leg. */
  run(options: FaultClauseOptions): Promise<FaultVerdict>;
}
