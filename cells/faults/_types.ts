// The fault tier's shared vocabulary: what every clause takes and what it returns. The
// tier (`tier.ts`) turns a verdict into a report row on its leg × library.
import type { SkipKind, Status } from "../engine/report.ts";
import type { Leg } from "../../harness/legs.ts";
import type { ChildPermissions } from "../../harness/permissions.ts";

/** The fault clauses, by id. */
export type FaultClauseId = "F1" | "F2" | "F3" | "F4" | "F5";

/** What one fault clause gets. */
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

/** What one fault clause found on one leg. */
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

/** A fault clause: its id, its name in the report, and its run on one leg. */
export interface FaultClause {
  /** `F1` to `F5`. */
  id: FaultClauseId;
  /** The report's clause name, e.g. `F1 injected errors`. */
  name: string;
  /** Runs the clause on one leg. */
  run(options: FaultClauseOptions): Promise<FaultVerdict>;
}
