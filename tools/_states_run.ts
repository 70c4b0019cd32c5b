// What the tools over the states tiers (`deno task sweep`, `deno task powerloss-cells`) share:
// their request's axis fields, and their ending (the JSON report, the table, the verdict line).
import type { LegName } from "../harness/legs.ts";
import type { Library } from "../runner/libraries.ts";
import type { TierOutcome } from "../runner/result.ts";
import { endRun, evidenceDir, type ParsedFlags, type SharedOptions, writeJson } from "./_cli.ts";
import { renderTable, statesVerdict, terminalWidth } from "./_table.ts";

/** The axis a states tool runs on once its flags are read. */
export interface StatesAxis {
  /** The parsed flags (`--cells` given or not). */
  flags: ParsedFlags;
  /** The libraries the store runs on. */
  libraries: Library[];
  /** The run's seed. */
  seed: number;
}

/** The fields of a states tier's request that come from the shared flags. */
export interface StatesRequest {
  target: string;
  legs: LegName[];
  libraries: Library[];
  seed: number;
  jobs: number;
  quick: boolean;
  cells?: number[];
  evidenceDir: string;
  log: (line: string) => void;
}

/** The request fields of a states tier from the shared flags and the axis. */
export function statesRequest(shared: SharedOptions, axis: StatesAxis): StatesRequest {
  return {
    target: shared.target,
    legs: shared.legs,
    libraries: axis.libraries,
    seed: axis.seed,
    jobs: shared.jobs,
    quick: shared.quick,
    // Only the clauses of the cells named; by default every one the tier judges.
    ...(axis.flags.has("--cells") ? { cells: shared.cells } : {}),
    evidenceDir: evidenceDir(),
    log: (line: string) => console.log(line),
  };
}

/** How a states tool ends its run. */
export interface StatesEnd extends StatesAxis {
  /** The tool's name in messages (`sweep --syscalls`, `powerloss-cells`). */
  name: string;
  /** The tool's name for the survivors' check. */
  tool: string;
  /** Where the JSON report goes. */
  json: string;
  /** The shared flags' values. */
  shared: SharedOptions;
  /** When the run started (`performance.now()`). */
  started: number;
  /** More fields of the JSON report. */
  extra?: Record<string, unknown>;
  /** Lines printed before the table (checking rates). */
  lines?: string[];
}

/**
 * Ends a states tool's run: nothing it started may still run (a survivor fails it, named),
 * then the JSON report, the table and the verdict line.
 *
 * @param outcome The tier's outcome.
 * @param end The run's name, report path, axis and start.
 * @returns The exit code: 0 on PASS, else 1.
 */
export async function endStatesRun(outcome: TierOutcome, end: StatesEnd): Promise<number> {
  const survivors = await endRun(end.tool);
  const seconds = (performance.now() - end.started) / 1000;
  await writeJson(end.json, {
    date: new Date().toISOString(),
    target: end.shared.target,
    seed: end.seed,
    legs: end.shared.legs,
    libraries: end.libraries,
    ...end.extra,
    survivors,
    ...outcome,
  });
  for (const line of end.lines ?? []) console.log(line);
  console.log(`\n${renderTable(outcome.results, { width: terminalWidth() })}\n`);
  const { line, verdict } = statesVerdict(end.name, outcome, { seconds, survivors });
  console.log(line);
  console.log(`report: ${end.json}`);
  return verdict === "PASS" ? 0 : 1;
}
