import type { Leg } from "../../harness/legs.ts";

/**
 * Options every cell takes.
 *
 * @example
 * ```ts
 * import type { CellOptions } from "./options.ts";
 * import { registerCells } from "../register.ts";
 * const options: CellOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   label: "reference",
 *   overallDeadlineMs: 5 * 60_000,
 * };
 * await registerCells(options);
 * ```
 */
export interface CellOptions {
  /** The target module: a specifier, URL or path whose `openStore` opens the store. */
  target: string | URL;
  /** The leg; default: `SESSION_DB_JOURNAL_MODE` and the library this process loaded. */
  leg?: Leg;
  /** A label for the target in test names (default: the module's file name). */
  label?: string;
  /** Keep the run directory as evidence when the cell fails (default `true`). */
  keepEvidence?: boolean;
  /** The seed of the run's random choices (default `CELLS_SEED`, else fresh; printed). */
  seed?: number;
  /**
   * The whole cell's deadline, every child and wait included (default
   * `CELLS_CELL_DEADLINE_MS`, else 10 minutes):
   * past it the children still running are killed, and the cell fails with their stderr
   * when its run had stopped moving, or is an ERROR (too slow to judge) when it moved
   * within the last quarter of the deadline (at most a minute).
   */
  overallDeadlineMs?: number;
  /**
   * How long the leg probe waits for the store to open and take its first writes
   * (default 30 s, or `CELLS_OPEN_DEADLINE_MS`): a store whose `openStore` never returns
   * fails every cell within it, naming the target, instead of hanging until the overall
   * deadline.
   */
  openDeadlineMs?: number;
  /**
   * Kills inside an operation the target declares no crash point in (cell 1's append,
   * cells 3 and 4, cell 5's recovery sweep): at
   * every `sync` call of it (default, or `CELLS_KILL_SERIES`), at `any` file-system call,
   * or `off`. Needs the LD_PRELOAD recorder (Linux/glibc and `cc`); without it the cell
   * says so and relies on random kills.
   */
  killSeries?: "sync" | "any" | "off";
  /**
   * Races inside an operation the target declares no crash point in (cell 2's claim,
   * cell 3's publish, cell 4's rewind, cell 7's fenced writes): the child is stopped
   * before each lock call of it in turn while a second writer acts or takes over (cell 2:
   * every claimant stopped at once, then all continued) (`locks`), or not (`off`). Default `CELLS_RACE_SERIES`, else
   * `off`: `deno task matrix` and `deno task mutants` turn it on. Needs the recorder,
   * as `killSeries`; about one child pair per lock call (10 to 20 per operation).
   */
  raceSeries?: "locks" | "off";
}
