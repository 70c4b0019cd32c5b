// The recorded-call sweep's report: empty, for a store that could not be seeded, and
// the final one with the leg's verdict (a state observed in another mode than the leg's
// voids the run's evidence: SKIP, never PASS) and every count.
import { legVerdict } from "../../../harness/legs.ts";
import { sqliteLibraryPath, sqliteVersion } from "../../../session_db/sqlite/database.ts";
import type { CallFailure, CallSweepOptions, CallSweepReport } from "../core/types.ts";
import type { Setting } from "./setting.ts";

/** What a finished sweep counted. */
export type Finished =
  & Pick<Setting, "options" | "root" | "observations" | "clauses" | "counts" | "torn" | "resumes">
  & {
    mode: "crash" | "power-loss";
    /** Distinct recovered contents judged. */
    judged: number;
  };

/** The failure of a store that could not be seeded, leading with its error. */
export function seedFailure(reason: string, replay: string): CallFailure {
  return {
    program: "",
    call: 0,
    operation: -1,
    clause: "open",
    state: "the seeded store",
    kind: "run",
    problems: [reason],
    replay,
  };
}

/** The report of a sweep that could not seed its store: a FAIL leading with the store's error. */
export function failedToSeed(
  options: CallSweepOptions,
  mode: "crash" | "power-loss",
  reason: string,
): CallSweepReport {
  return {
    ...emptyReport(options, mode),
    failures: [seedFailure(reason, `deno task sweep --syscalls --target ${options.target}`)],
    ok: false,
  };
}

export function emptyReport(
  options: CallSweepOptions,
  mode: "crash" | "power-loss",
): CallSweepReport {
  return {
    mode,
    leg: options.leg ?? "default",
    target: options.target,
    seed: options.seed,
    library: sqliteLibraryPath(),
    sqliteVersion: sqliteVersion(),
    onDisk: "not observed",
    programs: 0,
    states: 0,
    judged: 0,
    torn: { states: 0, tearable: 0, instants: 0 },
    resumes: { run: 0, failed: 0, candidates: 0 },
    children: { run: 0, failed: 0 },
    seconds: 0,
    statesPerSecond: 0,
    clauses: {},
    failures: [],
    ok: false,
  };
}

export function finalReport(
  s: Finished,
  programs: number,
  failures: CallFailure[],
): CallSweepReport {
  const leg = s.options.leg ?? "default";
  // A state in another mode than the leg's voids the run's evidence: SKIP, never PASS.
  const audit = legVerdict(
    { name: leg, library: sqliteLibraryPath(), sqliteVersion: sqliteVersion() },
    s.observations,
  );
  return {
    ...emptyReport(s.options, s.mode),
    onDisk: audit.onDisk,
    ...(audit.honoured ? {} : { notHonoured: audit.reason! }),
    programs,
    states: s.counts.states,
    judged: s.judged,
    torn: s.torn,
    resumes: s.resumes,
    children: { run: s.counts.children, failed: s.counts.childFailures },
    seconds: s.counts.seconds,
    statesPerSecond: s.counts.seconds > 0 ? s.counts.states / s.counts.seconds : 0,
    clauses: s.clauses,
    failures,
    ...(failures.length ? { dir: s.root } : {}),
    ok: failures.length === 0 && s.counts.states > 0 && audit.honoured,
  };
}
