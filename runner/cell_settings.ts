// The cells' settings that travel in the environment, checked before anything runs: a bad
// one would otherwise reach every cell's process and fail a correct store's cells (or be
// ignored), instead of being the caller's usage error.
import { envMilliseconds, parseMilliseconds } from "../internal/env_ms.ts";
import { JUDGING_DEADLINE_ENV, JUDGING_DEADLINE_MS } from "../internal/judging_beacon.ts";
import { parseSeed } from "../harness/seeded_random.ts";
import { parseSpan } from "../cells/engine/span.ts";
import { OPEN_DEADLINE_MS } from "../cells/engine/probe_store.ts";
import { CELL_DEADLINE_ENV, CELL_DEADLINE_MS } from "../cells/engine/run.ts";
import { type SeriesKind, seriesKind } from "../cells/moves/kill_series.ts";
import { type RaceSeries, raceSeriesOf } from "../cells/moves/race.ts";
import { crashPointsSetting } from "../cells/contract/load_target.ts";

/**
 * Checks the settings the cells read from their environment: `CELLS_OPEN_DEADLINE_MS`,
 * `CELLS_CELL_DEADLINE_MS`,
 * `CELLS_JUDGING_DEADLINE_MS`, `CELLS_SEED`, `CELLS_SPAN`, `CELLS_KILL_SERIES`,
 * `CELLS_RACE_SERIES` and `CELLS_CRASH_POINTS`.
 *
 * @param get Reads a variable as the cells' processes will see it (default: this process's).
 * @throws {Error} The first bad one, named with what to use instead.
 * @example
 * ```ts
 * import { checkCellSettings } from "./cell_settings.ts";
 * checkCellSettings((name) => name === "CELLS_SPAN" ? "10" : undefined);
 * ```
 */
export function checkCellSettings(
  get: (name: string) => string | undefined = (name) => Deno.env.get(name),
): void {
  parseMilliseconds("CELLS_OPEN_DEADLINE_MS", get("CELLS_OPEN_DEADLINE_MS"), OPEN_DEADLINE_MS);
  parseMilliseconds(CELL_DEADLINE_ENV, get(CELL_DEADLINE_ENV), CELL_DEADLINE_MS);
  parseMilliseconds(JUDGING_DEADLINE_ENV, get(JUDGING_DEADLINE_ENV), JUDGING_DEADLINE_MS);
  parseSeed(get("CELLS_SEED"));
  const span = get("CELLS_SPAN");
  if (span !== undefined) parseSpan(span);
  const kill = get("CELLS_KILL_SERIES");
  if (kill !== undefined) seriesKind(kill as SeriesKind);
  const race = get("CELLS_RACE_SERIES");
  if (race !== undefined) raceSeriesOf(race as RaceSeries);
  crashPointsSetting(get("CELLS_CRASH_POINTS"));
}

/**
 * Checks what a run reads from its setting before anything starts ({@linkcode checkCellSettings},
 * {@linkcode checkTempFolder}) and gives how long the store may take to open.
 *
 * @param openDeadlineMs The open deadline asked for, if any.
 * @returns It, else `CELLS_OPEN_DEADLINE_MS`, else 30 s.
 * @throws {Error} The first bad setting, named with what to use instead.
 * @example
 * ```ts
 * import { checkRunSettings } from "./cell_settings.ts";
 * console.log(checkRunSettings(5000)); // 5000
 * ```
 */
export function checkRunSettings(openDeadlineMs?: number): number {
  checkCellSettings();
  checkTempFolder();
  return openDeadlineMs ?? envMilliseconds("CELLS_OPEN_DEADLINE_MS", OPEN_DEADLINE_MS);
}

/**
 * Checks that this process can make temporary folders (where `TMPDIR` points, else the
 * system's): every run makes some, and a missing one would end it midway.
 *
 * @throws {Error} When it cannot, naming the folder and the fix.
 * @example
 * ```ts
 * import { checkTempFolder } from "./cell_settings.ts";
 * checkTempFolder();
 * ```
 */
export function checkTempFolder(): void {
  try {
    Deno.removeSync(Deno.makeTempDirSync({ prefix: "cells-check-" }));
  } catch (error) {
    const where = Deno.env.get("TMPDIR");
    throw new Error(
      `Cannot make a temporary folder${where ? ` in "${where}" (TMPDIR)` : ""}: ${
        (error as Error).message
      }: ${where ? "unset TMPDIR or name a folder this user can write" : "check the system's"}`,
      { cause: error },
    );
  }
}
