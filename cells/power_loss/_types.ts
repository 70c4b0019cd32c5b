// The power-loss runs' options, below the machinery that takes them (record.ts, resume.ts).
import type { Leg } from "../../harness/legs.ts";
import type { Profile } from "../../recorder/crash_states.ts";
import type { CellRun } from "../engine/_types.ts";
import type { CellOptions } from "../engine/options.ts";

/**
 * How the writer dies: the instant an operation is acknowledged, or at a random moment.
 *
 * @example
 * ```ts
 * import type { PowerLossKill } from "./mod.ts";
 * import { powerLossPrefixCell } from "../prefix_durability/power_loss.ts";
 * const kills: PowerLossKill[] = ["ack"]; // only the kill the instant an append is acknowledged
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossPrefixCell({ target, kills })) Deno.test(test);
 * ```
 */
export type PowerLossKill = "ack" | "random";

/**
 * Options of the power-loss cells and runs.
 *
 * @example
 * ```ts
 * import type { PowerLossOptions } from "./mod.ts";
 * import { powerLossCells } from "../power_loss_cells.ts";
 * const options: PowerLossOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   profile: "ext4-ordered",
 *   subsets: 4,
 *   seed: 7, // replay a reported run
 * };
 * for (const test of await powerLossCells(options)) Deno.test(test);
 * ```
 */
export interface PowerLossOptions extends CellOptions {
  /** Acknowledged operations before the kill (default 40 appends, 15 rotations). */
  minAcknowledged?: number;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number;
  /** Which kills to run (default both). */
  kills?: readonly PowerLossKill[];
  /** The persistence profile: how names persist (default `posix`, the strict one). */
  profile?: Profile;
  /** Random states per crash instant, half of them with torn sectors (default 12). */
  subsets?: number;
  /**
   * Crash instants: the last N sync points, the kill's instant counting as one (default
   * every sync point of the run).
   */
  instants?: number;
  /** The first seed of the random states (default: drawn, and reported). */
  seed?: number;
  /** Extra environment for the writer (e.g. `SESSION_DB_SYNCHRONOUS` for the tool). */
  env?: Record<string, string>;
  /** Recovered states continued by a fresh process per run (default 3; 0: none). */
  resumes?: number;
  /** Whether the torn last writes are enumerated (default true; off only to show what they catch). */
  tornLast?: boolean;
}

/**
 * What a run needs: the leg, the target, a fresh folder.
 *
 * @example
 * ```ts
 * import { currentLeg } from "../../harness/legs.ts";
 * import type { PowerLossRunOptions } from "./mod.ts";
 * import { powerLossPrefixRun } from "../prefix_durability/power_loss.ts";
 * const options: PowerLossRunOptions = {
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "random",
 * };
 * console.log((await powerLossPrefixRun(options)).statesChecked);
 * ```
 */
export interface PowerLossRunOptions extends Omit<PowerLossOptions, "target" | "leg" | "kills"> {
  /** The leg (library, journal mode). */
  leg: Leg;
  /** The target specifier. */
  target: string;
  /** A fresh folder for the run (created). */
  dir: string;
  /** The kill. */
  kill: PowerLossKill;
  /** Notes each change of what the writer acknowledged as a move of the cell's run. */
  progress?: CellRun["progress"];
}
