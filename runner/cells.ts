/**
 * The cells tier: every cell on every leg × library (× repetition), each leg in its own
 * `deno test` child without network access, read back from the report file each cell
 * writes (`CELLS_REPORT_DIR`). Nothing is read from the children's console: a requested
 * cell with no report is an ERROR (the test run's exit code and the tail of its output
 * in the reason), never a PASS.
 *
 * @example
 * ```ts ignore
 * import { runCells } from "./cells.ts";
 * const tier = await runCells({
 *   target: new URL("../cells/reference_target.ts", import.meta.url).href,
 *   cells: [1, 2],
 *   legs: ["default"],
 *   libraries: [{ label: "system", path: "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" }],
 * });
 * console.log(tier.results.map((r) => `${r.clause}: ${r.status}`));
 * ```
 *
 * @module
 */
import { checkCellSettings } from "./cell_settings.ts";
import { type CellReport, readCellReports, type StoreEngine } from "../cells/engine/report.ts";
import type { LegName } from "../harness/legs.ts";
import { basename, join } from "node:path";
import { fromFileUrl } from "../internal/path.ts";
import type { Survivor } from "../harness/process_tree.ts";
import { Pool } from "./_pool.ts";
import { spawnTree, survivorsFile, survivorsOutcome } from "./_tree_child.ts";
import { LEG_PERMISSIONS, legChildEnv } from "./leg_child.ts";
import type { Library } from "./libraries.ts";
import type { Outcome, TierOutcome } from "./result.ts";
import { leftToTwin, type LegAt, legFound, LegsFound } from "./_twin_legs.ts";
import { CELL_TITLES as CELL_TITLES_BY_NUMBER } from "../cells/contract/target.ts";
import { killAtDeadline } from "../internal/deadline_kill.ts";
import { childOutput } from "../internal/child_output.ts";
import {
  JUDGING_BEACON_ENV,
  JUDGING_DEADLINE_MS,
  type JudgingBeacon,
  watchJudging,
} from "../internal/judging_beacon.ts";

const ROOT = fromFileUrl(new URL("../", import.meta.url));

/** The cells' titles, for outcomes of cells that reported nothing (indexed by any number). */
export const CELL_TITLES: Readonly<Record<number, string>> = CELL_TITLES_BY_NUMBER;

/**
 * One leg on one library, in one repetition.
 *
 * @example
 * ```ts
 * import type { LegRun } from "./cells.ts";
 * const run: LegRun = { leg: "wal", library: { label: "fixed", path: "/lib.so" }, run: 1 };
 * ```
 */
export interface LegRun {
  /** The journal-mode leg. */
  leg: LegName;
  /** The library. */
  library: Library;
  /** The repetition, from 1. */
  run: number;
}

/**
 * Options of {@linkcode runCells}.
 *
 * @example
 * ```ts
 * import type { CellsOptions } from "./cells.ts";
 * const soak: CellsOptions = {
 *   target: "file:///srv/my_target.ts",
 *   cells: [1, 2],
 *   legs: ["default"],
 *   libraries: [{ label: "own", path: "" }],
 *   repeat: 30,
 * };
 * ```
 */
export interface CellsOptions {
  /** The target specifier. */
  target: string;
  /** The cells. */
  cells: readonly number[];
  /** The legs. */
  legs: readonly LegName[];
  /** The libraries: the library axis (one `own` or `none` entry for a store on its own engine). */
  libraries: readonly Library[];
  /** What the store runs on (from the capability probe), when known. */
  engine?: StoreEngine;
  /**
   * The store's own error when it could not open at all: the tier is then one FAIL
   * leading with it, and no cell runs.
   */
  openError?: string;
  /** Legs run at once (default 2). */
  jobs?: number;
  /** Runs of every leg × library (default 1). */
  repeat?: number;
  /** The seed of every cell's random choices (`CELLS_SEED`; default: each draws one). */
  seed?: number;
  /** More environment of every leg's child (evidence folder, span, deadlines). */
  env?: Record<string, string>;
  /** Where the cells' attachments (plots) are copied, if anywhere. */
  attachDir?: string;
  /** How long one leg's test run may take before it is killed (default 60 minutes). */
  timeoutMs?: number;
  /**
   * How long the store may take over one judging in a leg's own test run (opening what a
   * crash left) before it is killed and the cell FAILs (default 2 minutes).
   */
  judgingDeadlineMs?: number;
  /** Called once per finished leg with its outcomes and wall time. */
  onLeg?(run: LegRun, outcomes: Outcome[], seconds: number): void;
  /**
   * Called as each cell's report appears, while its leg still runs (a cell reports once
   * per leg: what it says is final), so that later work need not wait for the whole leg.
   */
  onReport?(run: LegRun, outcome: Outcome): void;
  /**
   * Under `--quick`: the default leg runs cell 1 first and, when it ran in the very on-disk
   * mode of a leg asked for by name that is honoured on the same library, leaves its other
   * cells to that leg (SKIP of kind `judged-on-twin`); the legs asked for by name run first.
   */
  twinDefault?: boolean;
  /**
   * Under `--quick`: a leg on a library after the first runs cell 1 first and, when it ran
   * in the very on-disk mode of the same leg on an earlier library, leaves its other cells
   * there (SKIP of kind `judged-on-twin`).
   */
  twinLibraries?: boolean;
}

/** What one leg's `deno test` did: its reports, and how it ended. */
export interface LegResult {
  /** The cells' reports. */
  reports: CellReport[];
  /** The test run's exit code (`null`: killed at its timeout). */
  code: number | null;
  /** The last lines of its output (only ever the reason of an ERROR). */
  tail: string;
  /** Its wall time. */
  seconds: number;
  /** What it started and left running (killed since). */
  survivors?: Survivor[];
  /** The judging the test run was killed in: the store never returned from it. */
  stalled?: JudgingBeacon;
}

async function writeTestFile(
  at: { dir: string; name: string },
  target: string,
  cells: readonly number[],
) {
  const file = join(at.dir, at.name);
  const mod = new URL("../cells/mod.ts", import.meta.url).href;
  const tree = new URL("../harness/process_tree.ts", import.meta.url).href;
  await Deno.writeTextFile(
    file,
    `import { registerCells } from ${JSON.stringify(mod)};\n` +
      `import { reapRunScope } from ${JSON.stringify(tree)};\n` +
      `await registerCells({ target: ${JSON.stringify(target)}, cells: ${
        JSON.stringify(cells)
      } });\n` +
      // Last: what this process started (the store opened here, say) and left running.
      `Deno.test({ name: "no survivors", sanitizeOps: false, sanitizeResources: false, ` +
      `async fn() { Deno.writeTextFileSync(Deno.env.get("CELLS_SURVIVORS")!, ` +
      `JSON.stringify(await reapRunScope())); } });\n`,
  );
  return file;
}

type Reported = (run: LegRun, outcome: Outcome) => void;

async function runLeg(
  run: LegRun,
  at: { testFile: string; reportDir: string; reported?: Reported | undefined },
  options: CellsOptions,
): Promise<LegResult> {
  const { testFile, reportDir, reported } = at;
  const beacon = `${reportDir}.judging`;
  const env = legChildEnv(run.library.path, run.leg, {
    CELLS_REPORT_DIR: reportDir,
    CELLS_SURVIVORS: `${reportDir}.survivors`,
    [JUDGING_BEACON_ENV]: beacon,
    ...(options.seed !== undefined ? { CELLS_SEED: String(options.seed) } : {}),
    ...options.env,
  });
  const started = performance.now();
  const { child, kill, settle } = spawnTree(Deno.execPath(), {
    // --unstable-kv: a target on Deno KV (targets/deno_kv.ts) is opened here too.
    // --no-check: the cells are checked with the project, and the target is imported
    // dynamically (never checked here); checking the generated file cost every unit ~4 s.
    args: ["test", "--no-check", "--unstable-kv", ...LEG_PERMISSIONS, testFile],
    cwd: ROOT,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  const timeoutMs = options.timeoutMs ?? 60 * 60_000;
  const deadline = killAtDeadline(kill, timeoutMs);
  // The cells judge what the store's children left in this process: a store that never
  // returns from opening it is bounded, and named, from here.
  const judge = watchJudging(child, beacon, options.judgingDeadlineMs ?? JUDGING_DEADLINE_MS);
  const poll = reported ? setInterval(() => watch(run, reportDir, reported, options), 200) : 0;
  const output = await childOutput(child);
  deadline.clear();
  judge.clear();
  const stalled = judge.stalled();
  const timedOut = deadline.passed();
  clearInterval(poll);
  // Inside (its own run scope's reap) and outside (its tree): nothing may be left running.
  const survivors = [...await survivorsFile(env.CELLS_SURVIVORS!), ...await settle()];
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  const tail = text.trim().split("\n").slice(-12).join("\n");
  const { reports } = await readCellReports(reportDir);
  return {
    reports,
    code: timedOut || stalled ? null : output.code,
    tail: timedOut ? `killed past the leg's timeout of ${timeoutMs} ms\n${tail}` : tail,
    ...(stalled ? { stalled } : {}),
    seconds: (performance.now() - started) / 1000,
    survivors,
  };
}

const seen = new Set<string>();

/** Hands each new report of a running leg to `reported` (a half-written one waits). */
function watch(run: LegRun, reportDir: string, reported: Reported, options: CellsOptions): void {
  try {
    for (const entry of Deno.readDirSync(reportDir)) {
      const path = join(reportDir, entry.name);
      if (!entry.name.endsWith(".json") || seen.has(path)) continue;
      let report: CellReport;
      try {
        report = JSON.parse(Deno.readTextFileSync(path));
      } catch {
        continue; // still being written: the next look reads it whole
      }
      seen.add(path);
      reported(run, outcomeOf(report, run, options));
    }
  } catch { /* the folder is gone: the leg ended */ }
}

/** The command that replays one cell on one leg × library (with its seed, when known). */
function cellReplay(
  target: string,
  cell: number,
  at: { leg: string; library: Library; seed?: number | undefined },
): string {
  const { leg, library, seed } = at;
  const own = library.label === "own" || library.label === "none";
  return `deno task matrix --target ${target} --cells ${cell} --legs ${leg}${
    own ? "" : ` --libraries ${library.label}`
  }${seed !== undefined ? ` --seed ${seed}` : ""}`;
}

function outcomeOf(report: CellReport, run: LegRun, options: CellsOptions): Outcome {
  const seed = typeof report.figures.seed === "number" ? report.figures.seed : undefined;
  const engine = report.engine ?? options.engine;
  const axis = run.library.label !== "own" && run.library.label !== "none";
  const version = axis ? report.sqliteVersion : engine?.sqliteVersion;
  const failed = report.status === "FAIL" || report.status === "ERROR";
  return {
    clause: `${report.cell} ${report.title}`,
    cell: report.cell,
    tier: "cells",
    leg: run.leg,
    library: run.library.label,
    ...(engine ? { engine } : {}),
    ...(version ? { sqliteVersion: version } : {}),
    status: report.status,
    ...(report.reason ? { reason: report.reason } : {}),
    ...(report.skipKind ? { skipKind: report.skipKind } : {}),
    // A cell's FAIL and ERROR carry their checks; a report without them says its reason.
    ...(failed ? { checks: report.checks ?? [report.reason ?? "no reason given"] } : {}),
    ...(report.diagnoses?.length ? { diagnoses: report.diagnoses } : {}),
    ...(report.evidence ? { evidence: report.evidence } : {}),
    ...(seed !== undefined ? { seed } : {}),
    replay: report.replay ??
      cellReplay(options.target, report.cell, { ...run, seed: seed ?? options.seed }),
    figures: report.figures,
    ...(options.repeat && options.repeat > 1 ? { run: run.run } : {}),
  };
}

/** Why a test run killed for a judging that never returned is the store's failure. */
function stalledReason(stalled: JudgingBeacon, options: CellsOptions): string {
  const ms = options.judgingDeadlineMs ?? JUDGING_DEADLINE_MS;
  return `The store never returned while ${stalled.what} (judged in the test run's own process): still running after ${
    ms / 1000
  } s, the test run was killed; a store must open and read what a crash left`;
}

/**
 * A leg's outcomes: one per cell report; an ERROR for each requested cell that wrote
 * none; an ERROR when the test run failed although every cell reported PASS.
 *
 * @param run The leg.
 * @param result Its reports and how its test run ended.
 * @param options The tier's options.
 * @returns The outcomes.
 */
export function legOutcomes(run: LegRun, result: LegResult, options: CellsOptions): Outcome[] {
  const outcomes = result.reports.map((r) => outcomeOf(r, run, options));
  const ended = result.code === null ? "was killed" : `exited ${result.code}`;
  const row = (status: "ERROR" | "FAIL", clause: string, reason: string, cell?: number) => ({
    clause,
    ...(cell !== undefined ? { cell } : {}),
    tier: "cells" as const,
    leg: run.leg,
    library: run.library.label,
    status,
    reason,
    checks: [reason.split("\n")[0]!],
    ...(cell !== undefined
      ? { replay: cellReplay(options.target, cell, { ...run, seed: options.seed }) }
      : {}),
    ...(options.repeat && options.repeat > 1 ? { run: run.run } : {}),
  });
  const missing = options.cells.filter((cell) => !result.reports.some((r) => r.cell === cell));
  const stalled = result.stalled;
  for (const cell of missing) {
    const clause = `${cell} ${CELL_TITLES[cell] ?? ""}`.trim();
    if (!stalled) {
      const tail = result.tail.split("\n").slice(-3).join(" | ");
      const why = `The test run ${ended} and wrote no report for cell ${cell}: ${tail}`;
      outcomes.push(row("ERROR", clause, `${why}\n${result.tail}`, cell));
    } else if (stalled.cell === cell || (stalled.cell === undefined && missing.length === 1)) {
      outcomes.push({
        ...row("FAIL", clause, stalledReason(stalled, options), cell),
        ...(stalled.folder ? { evidence: stalled.folder } : {}),
      });
    } else {
      const where = stalled.cell !== undefined ? ` in cell ${stalled.cell}` : "";
      const why = `Not judged: the test run was killed when the store never returned${where}`;
      outcomes.push(row("ERROR", clause, `${why} (${stalled.what})`, cell));
    }
  }
  const allPassed = result.reports.every((r) => r.status === "PASS");
  if (result.code !== 0 && !missing.length && allPassed) {
    outcomes.push(row(
      "ERROR",
      "test run",
      `The test run ${ended} although every cell reported PASS: ${result.tail}`,
    ));
  }
  if (result.survivors?.length) {
    outcomes.push(survivorsOutcome(result.survivors, {
      tier: "cells",
      leg: run.leg,
      library: run.library.label,
      ...(options.repeat && options.repeat > 1 ? { run: run.run } : {}),
    }));
  }
  return outcomes.sort((a, b) => (a.cell ?? 99) - (b.cell ?? 99));
}

/**
 * Runs the cells on every leg × library (× repetition).
 *
 * @param options What to run.
 * @returns The tier's outcome: one result per cell × leg × library (× run).
 * @throws {Error} When a setting the cells read from the environment (`options.env` over this
 * process's) is bad: `CELLS_SPAN`, `CELLS_KILL_SERIES`, `CELLS_SEED`, … (`checkCellSettings`).
 * @example
 * ```ts ignore
 * import { runCells } from "./cells.ts";
 * const tier = await runCells({
 *   target: "file:///srv/my_target.ts",
 *   cells: [1],
 *   legs: ["default"],
 *   libraries: [{ label: "system", path: "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" }],
 * });
 * console.log(tier.results.filter((r) => r.status !== "PASS"));
 * ```
 */
export async function runCells(options: CellsOptions): Promise<TierOutcome> {
  checkCellSettings((name) => options.env?.[name] ?? Deno.env.get(name));
  const started = performance.now();
  if (options.openError) {
    const library = options.libraries[0]?.label ?? "none";
    return {
      run: { tier: "cells", status: "RAN", seconds: 0 },
      results: [{
        clause: "store opens and writes",
        tier: "cells",
        leg: "default",
        library,
        ...(options.engine ? { engine: options.engine } : {}),
        status: "FAIL",
        reason: options.openError,
        checks: [options.openError],
        replay: `deno task conformance --target ${options.target} --tiers cells`,
      }],
    };
  }
  const dir = await Deno.makeTempDir({ prefix: "cells-" });
  const pool = new Pool(options.jobs ?? 2);
  const units = new LegUnits(options, dir);
  const runs: LegRun[] = [];
  for (let run = 1; run <= (options.repeat ?? 1); run++) {
    for (const library of options.libraries) {
      for (const leg of options.legs) runs.push({ leg, library, run });
    }
  }
  // A leg that may be twinned waits on its twins' cell 1: the legs asked for by name go first.
  if (units.twinning) runs.sort((a, b) => a.run - b.run || rank(a) - rank(b));
  const results: Outcome[] = [];
  try {
    await Promise.all(runs.map(async (run) => {
      // No slot is held while waiting on another leg's cell 1: every wait ends.
      const { outcomes, seconds } = await units.mayTwin(run)
        ? await units.twinned(run, pool)
        : await pool.run(() => units.unit(run, options.cells), 1);
      results.push(...outcomes);
      options.onLeg?.(run, outcomes, seconds);
    }));
  } finally {
    units.found.settle();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
  const order = (r: Outcome) =>
    ((r.run ?? 1) * 1000 + (r.cell ?? 9)) * 100 + options.legs.indexOf(r.leg as LegName) * 10 +
    options.libraries.findIndex((l) => l.label === r.library);
  results.sort((a, b) => order(a) - order(b));
  return {
    run: { tier: "cells", status: "RAN", seconds: (performance.now() - started) / 1000 },
    results,
  };
}

/** One `deno test` of some cells on a leg, and a leg left to its twin. */
class LegUnits {
  /** Whether a leg may be left to a twin (`twinDefault` or `twinLibraries`, and cells to). */
  readonly twinning: boolean;
  #options: CellsOptions;
  #dir: string;
  /** What cell 1 found on each leg: the default leg waits on its named legs'. */
  readonly found = new LegsFound();
  #testFiles = new Map<string, Promise<string>>();

  constructor(options: CellsOptions, dir: string) {
    this.#options = options;
    this.#dir = dir;
    const twinsOnLibrary = (options.twinDefault ?? false) &&
      options.legs.some((leg) => leg !== "default");
    const twinsAcross = (options.twinLibraries ?? false) && options.libraries.length > 1;
    this.twinning = options.cells.includes(1) && options.cells.length > 1 &&
      (twinsOnLibrary || twinsAcross);
  }

  #libraries(): string[] | undefined {
    const options = this.#options;
    return options.twinLibraries ? options.libraries.map((l) => l.label) : undefined;
  }

  /**
   * Whether the leg runs cell 1 first to find a twin: the default leg, and a leg whose
   * same leg ran on an earlier library (waited for).
   */
  async mayTwin(run: LegRun): Promise<boolean> {
    if (!this.twinning) return false;
    if (run.leg === "default" && this.#options.twinDefault) return true;
    const libraries = this.#libraries();
    return libraries !== undefined && await this.found.mayTwinAcross(legAt(run), libraries);
  }

  #reported = (run: LegRun, outcome: Outcome) => {
    if (outcome.cell === 1) this.found.record(legAt(run), legFound(outcome));
    this.#options.onReport?.(run, outcome);
  };

  /** Runs `cells` on the leg in one `deno test`. */
  async unit(run: LegRun, cells: readonly number[]) {
    const options = this.#options;
    const key = cells.join(",");
    if (!this.#testFiles.has(key)) {
      const size = this.#testFiles.size;
      const name = size ? `cells_${size}_test.ts` : "cells_test.ts";
      this.#testFiles.set(key, writeTestFile({ dir: this.#dir, name }, options.target, cells));
    }
    const testFile = await this.#testFiles.get(key)!;
    const reportDir = await Deno.makeTempDir({ dir: this.#dir, prefix: "report-" });
    const reported = options.onReport || this.twinning ? this.#reported : undefined;
    const result = await runLeg(run, { testFile, reportDir, reported }, options);
    if (options.attachDir) await keepAttachments(reportDir, run, options.attachDir);
    await Deno.remove(reportDir, { recursive: true }).catch(() => {});
    const outcomes = legOutcomes(run, result, { ...options, cells });
    this.found.record(legAt(run), legFound(outcomes.find((o) => o.cell === 1)));
    return { outcomes, seconds: result.seconds };
  }

  /** The leg's cell 1, then its other cells unless its twin judges them. */
  async twinned(run: LegRun, pool: Pool) {
    const options = this.#options;
    const head = await pool.run(() => this.unit(run, [1]), 1);
    const libraries = this.#libraries();
    const twin = await this.found.twinOf(legAt(run), {
      legs: options.twinDefault ? options.legs : [],
      ...(libraries ? { libraries } : {}),
    });
    const rest = options.cells.filter((cell) => cell !== 1);
    const tail = twin === undefined ? await pool.run(() => this.unit(run, rest), 1) : {
      outcomes: rest.map((cell) =>
        leftToTwin({
          clause: `${cell} ${CELL_TITLES[cell] ?? ""}`.trim(),
          cell,
          leg: run.leg,
          library: run.library.label,
          replay: cellReplay(options.target, cell, { ...run, seed: options.seed }),
          ...(options.repeat && options.repeat > 1 ? { run: run.run } : {}),
        }, twin)
      ),
      seconds: 0,
    };
    return { outcomes: [...head.outcomes, ...tail.outcomes], seconds: head.seconds + tail.seconds };
  }
}

function legAt(run: LegRun): LegAt {
  return { leg: run.leg, library: run.library.label, run: run.run };
}

function rank(run: LegRun): number {
  return run.leg === "default" ? 1 : 0;
}

/** Copies the cells' attachments (plots) beside the JSON report, named by library. */
async function keepAttachments(reportDir: string, run: LegRun, attachDir: string) {
  const { attachments } = await readCellReports(reportDir);
  for (const path of attachments) {
    await Deno.mkdir(attachDir, { recursive: true });
    const name = `${run.library.label.replace(/\W+/g, "_")}-${basename(path)}`;
    await Deno.copyFile(path, join(attachDir, name));
  }
}
