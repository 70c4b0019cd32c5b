// The types the cells code against: what a cell's run gets and a cell's definition.
// Re-exported by `cell.ts`; here so that `run.ts`, which `cell.ts` calls, can name them.
import type { Child, SpawnOptions } from "../../harness/child.ts";
import type { JournalObservation, Leg } from "../../harness/legs.ts";
import type { RunDir } from "../../harness/evidence.ts";
import type { StoreEngine } from "./report.ts";
import type { CellNumber } from "../contract/target.ts";

/** What a cell's run gets. */
export interface CellRun {
  /** The leg. */
  leg: Leg;
  /** The target specifier. */
  target: string;
  /** What the store runs on, observed by the leg probe. */
  engine: StoreEngine;
  /** The run directory (kept on failure). */
  run: RunDir;
  /** Figures for the evidence file and the report. */
  figures: Record<string, unknown>;
  /** Spawns a child script of the cells with the leg's environment and the target's access. */
  spawn(
    script: URL,
    args: string[],
    extra?: Partial<SpawnOptions>,
  ): Child;
  /** Records a figure and prints it. */
  note(name: string, value: unknown): void;
  /**
   * Writes a small file (e.g. an SVG plot) into the run directory and, when
   * `CELLS_REPORT_DIR` is set, beside the cell's JSON report; noted in `attachments`.
   */
  attach(name: string, text: string): void;
  /** The run's seed (noted as `seed`; `CELLS_SEED=<seed>` replays its random choices). */
  seed: number;
  /** The run's seeded random numbers in [0, 1): use it for every random choice. */
  random(): number;
  /**
   * Observes the journal mode the writer of `db` ran in, right after it was killed and
   * before anything reopens the file. Call it at every kill: the leg counts as honoured
   * only when every observation matches, otherwise the cell is a SKIP, never a PASS.
   *
   * @param db The database file.
   * @param at When, e.g. `round 2` or a crash point.
   * @param quiescent Whether the writer died between operations.
   */
  observeLeg(db: string, at: string, quiescent?: boolean): JournalObservation;
  /**
   * Wraps a measure of what the awaited work has done (a count of acknowledgements, say)
   * for a wait's `progress`: each change it returns is a move of the run, so that past
   * its overall deadline a run still moving is an ERROR (too slow to judge), not a FAIL.
   *
   * @param measure The measure.
   * @returns The same measure, noting its changes.
   */
  progress<T>(measure: () => T): () => T;
}

/**
 * A cell's definition. Its title, legs and required methods follow from its number (its
 * title in `CELL_TITLES`, every leg, its methods in `CELL_METHODS`) unless it names its own.
 */
export interface CellSpec {
  /** The cell number. */
  id: CellNumber;
  /** Short name, e.g. `prefix durability` (default: the cell's in `CELL_TITLES`). */
  title?: string;
  /** `default`: runs on the default leg only (say why in `legReason`); default `all`. */
  legs?: "all" | "default";
  /** Why the cell runs on the default leg only. */
  legReason?: string;
  /**
   * Store methods the cell needs; a store without them is skipped (default: the cell's
   * in `CELL_METHODS`).
   */
  requires?: readonly string[];
  /** Whether its children may run under the LD_PRELOAD recorder (needs an unscoped run). */
  preloads?: boolean;
  /** Groups of methods of which the cell needs at least one each (else skipped). */
  requiresOneOf?: readonly (readonly string[])[];
  /** The probe itself: throws on a violated clause. */
  run(ctx: CellRun, t: Deno.TestContext): Promise<void>;
}

/** A cell's definition with its defaults filled in: what the engine gates and runs. */
export type DefinedCell = CellSpec & Required<Pick<CellSpec, "title" | "legs" | "requires">>;
