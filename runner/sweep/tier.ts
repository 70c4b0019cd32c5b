/**
 * The crash-sweep tiers as typed results, for the conformance front door and the tools:
 *
 * - {@linkcode sweepTier}: `sweep` (named crash points, SIGKILL or the last-sync image),
 *   `syscalls-crash` (SIGKILL before every recorded file-system call) and
 *   `syscalls-power-loss` (every power-loss state of every sync point, the torn last
 *   writes enumerated), each with resume after recovery in the recorded-call tiers;
 * - {@linkcode powerLossCellsTier}: the power-loss cells 1, 3, 4, 5 and 8 to 12.
 *
 * Each returns a {@linkcode TierOutcome}: an `Outcome` per clause × leg × library with its
 * status, failed checks, evidence folder, replay command, figures and `judged` count. A
 * clause, tier or run that judged nothing is a SKIP with why, never a PASS. A store on its
 * own SQLite (or none) runs once, labelled `own` (or `none`): the library axis is this
 * project's binding's. Each library runs in a child process of its own
 * (`children/library.ts`: the FFI binding loads one library per process, and the cells'
 * settings are environment variables), whose result comes back through a file.
 *
 * @example
 * ```ts ignore
 * import { sweepTier } from "./tier.ts";
 * const outcome = await sweepTier({
 *   target: new URL("../../cells/reference_target.ts", import.meta.url).href,
 *   tier: "syscalls-power-loss",
 *   legs: ["default"],
 *   libraries: [{ label: "system", path: "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" }],
 *   quick: true,
 *   evidenceDir: Deno.makeTempDirSync(),
 * });
 * for (const r of outcome.results) console.log(r.clause, r.status, r.judged);
 * ```
 *
 * @module
 */
import { stderrLine } from "../../internal/stderr_line.ts";
import { startsWithDatabaseHeader } from "../../internal/sqlite_files.ts";
import { join } from "node:path";
import type { LegName } from "../../harness/legs.ts";
import { buildRecorder } from "../../recorder/build.ts";
import { targetSpecifier } from "../../cells/contract/target.ts";
import type { Outcome, TierName, TierOutcome } from "../result.ts";
import type { SkipKind } from "../../cells/engine/report.ts";
import { seedTemplate } from "./calls/record.ts";
import { spawnTree, survivorsOutcome } from "../_tree_child.ts";
import {
  type CallKnobs,
  type CellKnobs,
  type LibraryRequest,
  type LibraryResult,
  type PointKnobs,
  powerLossCellsOf,
} from "./library.ts";
import { killAtDeadline } from "../../internal/deadline_kill.ts";
import {
  JUDGING_BEACON_ENV,
  JUDGING_DEADLINE_MS,
  type JudgingBeacon,
  watchJudging,
} from "../../internal/judging_beacon.ts";

export type { CallKnobs, CellKnobs, LibraryResult, PointKnobs } from "./library.ts";

/** A SQLite library of the run: its label in the results and its path. */
export interface TierLibrary {
  /** `system`, `fixed`, or another name. */
  label: string;
  /** The shared library's path. */
  path: string;
}

/** What every tier of the sweep takes (the front door's common options). */
export interface TierOptions {
  /** The target module (path or URL). */
  target: string;
  /** The journal-mode legs. */
  legs: LegName[];
  /** The SQLite libraries (a store on its own SQLite runs once, on the first). */
  libraries: TierLibrary[];
  /** Fewer states, shorter runs. */
  quick: boolean;
  /** Where failing states keep their evidence. */
  evidenceDir: string;
  /** The seed (default: drawn, and reported in each outcome). */
  seed?: number;
  /** Children in flight at once (default 2). */
  jobs?: number;
  /** Only these cells' clauses (default every one the tier judges). */
  cells?: number[];
  /**
   * How long the store may take over one state judged in the tier's own process before it
   * FAILs as a store that cannot open what a crash left (default 2 min).
   */
  judgingDeadlineMs?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** Options of {@linkcode sweepTier}. */
export interface SweepTierOptions extends TierOptions {
  /** `sweep` (default), `syscalls-crash` or `syscalls-power-loss`. */
  tier?: "sweep" | "syscalls-crash" | "syscalls-power-loss";
  /** The named-point sweep's knobs. */
  points?: PointKnobs;
  /** The recorded-call sweep's knobs. */
  calls?: CallKnobs;
}

/** Options of {@linkcode powerLossCellsTier}. */
export interface PowerLossCellsTierOptions extends TierOptions {
  /** The power-loss cells' knobs. */
  powerLoss?: CellKnobs;
}

/** What the seeding child saw of the store: whether it runs on the binding, its file, its points. */
interface Store {
  failed?: string;
  binding?: boolean;
  sqliteFile: boolean;
  crashPoints: number;
}

async function probeStore(target: string, library: string, seed: number): Promise<Store> {
  const dir = await Deno.makeTempDir({ prefix: "sweep-probe-" });
  try {
    const seeded = await seedTemplate({ target, leg: "default", seed }, dir, {
      DENO_SQLITE_PATH: library,
    });
    if ("failed" in seeded) return { failed: seeded.failed, sqliteFile: false, crashPoints: 0 };
    const file = seeded.files.get("store.db");
    return {
      ...(seeded.binding !== undefined ? { binding: seeded.binding } : {}),
      sqliteFile: file !== undefined && startsWithDatabaseHeader(file),
      crashPoints: seeded.crashPoints.length,
    };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** A library's share still running after this long is killed (as a cells leg is). */
const SHARE_DEADLINE_MS = 60 * 60_000;

/** A share killed because the store never returned from judging one state. */
export class JudgingStalledError extends Error {
  /** The judging that never ended: the state, its leg and clause when known. */
  readonly stalled: JudgingBeacon;

  /**
   * @param stalled The judging.
   * @param ms The deadline it ran past.
   */
  constructor(stalled: JudgingBeacon, ms: number) {
    super(
      `The store never returned on the crash state "${stalled.what}" (judged in the tier's own process): still running after ${
        Math.round(ms / 1000)
      } s, the library's run was killed; a store must open and read what a crash left`,
    );
    this.name = "JudgingStalledError";
    this.stalled = stalled;
  }
}

/**
 * Runs one library's share in a child with that library; its progress lines go to `log`.
 *
 * @param request The share.
 * @param path The library the child loads.
 * @param log Progress lines.
 * @returns Its outcomes, reports and what it left running.
 * @example
 * ```ts ignore
 * import { libraryChild } from "./tier.ts";
 * declare const request: import("./library.ts").LibraryRequest;
 * const result = await libraryChild(request, "libsqlite3.so.0", console.log);
 * console.log(result.outcomes.length);
 * ```
 */
export async function libraryChild(
  request: LibraryRequest,
  path: string,
  log: (line: string) => void,
): Promise<LibraryResult> {
  const dir = await Deno.makeTempDir({ prefix: "sweep-library-" });
  const requestPath = join(dir, "request.json");
  const resultPath = join(dir, "result.json");
  await Deno.writeTextFile(requestPath, JSON.stringify(request));
  const beacon = join(dir, "judging.json");
  const judgingMs = request.judgingDeadlineMs ?? JUDGING_DEADLINE_MS;
  const env = {
    ...Deno.env.toObject(),
    DENO_SQLITE_PATH: path,
    CELLS_EVIDENCE_DIR: request.evidenceDir,
    [JUDGING_BEACON_ENV]: beacon,
    NO_COLOR: "1",
  };
  delete (env as Record<string, string | undefined>).SESSION_DB_JOURNAL_MODE;
  delete (env as Record<string, string | undefined>).SESSION_DB_CRASH_AT;
  const { child, kill, settle } = spawnTree(Deno.execPath(), {
    args: [
      "run",
      "--no-lock",
      "-A",
      "--unstable-kv",
      new URL("./children/library.ts", import.meta.url).href,
      requestPath,
      resultPath,
    ],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  });
  const stderr = new Response(child.stderr).text();
  // Every state is judged in that process: a store that never returns from one would hang
  // the tier for good. The state's judging has a deadline of its own (the store's FAIL), the
  // share a last one (an ERROR).
  const deadline = killAtDeadline(kill, SHARE_DEADLINE_MS);
  const watch = watchJudging(child, beacon, judgingMs);
  let pending = "";
  for await (const text of child.stdout.pipeThrough(new TextDecoderStream())) {
    const lines = (pending + text).split("\n");
    pending = lines.pop()!;
    for (const line of lines) log(line);
  }
  if (pending) log(pending);
  const status = await child.status;
  deadline.clear();
  watch.clear();
  // Inside (the share's own run scope) and outside (its tree): nothing may be left running.
  const outside = await settle();
  const stalled = watch.stalled();
  if (stalled) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new JudgingStalledError(stalled, judgingMs);
  }
  if (deadline.passed()) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new Error(
      `The ${request.label} library's run had not ended after ${
        SHARE_DEADLINE_MS / 60_000
      } min and was killed (a store call that never returned while its states were judged)`,
    );
  }
  try {
    const result = JSON.parse(await Deno.readTextFile(resultPath)) as LibraryResult;
    return { ...result, survivors: [...result.survivors ?? [], ...outside] };
  } catch {
    const tail = stderrLine(await stderr);
    throw new Error(
      `The ${request.label} library's run wrote no result (exit ${status.code}): ${tail}`,
    );
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** A replay's `--libraries`: the library by its label (none for a store on its own engine). */
function librariesFlag(library: TierLibrary): string {
  return library.label === "own" || library.label === "none" ? "" : ` --libraries ${library.label}`;
}

/** The libraries a store is judged on: each of ours on the binding, else one, labelled. */
function librariesFor(store: Store, libraries: readonly TierLibrary[]): TierLibrary[] {
  if (store.binding !== false) return [...libraries];
  return [{ label: store.sqliteFile ? "own" : "none", path: libraries[0]!.path }];
}

function errorOutcomes(options: TierOptions, tier: TierName, reason: string): Outcome[] {
  return options.legs.map((leg) => ({
    clause: "open",
    tier,
    leg,
    library: options.libraries[0]?.label ?? "system",
    status: "FAIL" as const,
    reason,
    checks: [reason],
    judged: 0,
  }));
}

/** Runs every library's share; the outcomes, or one ERROR per library that could not run. */
async function eachLibrary(
  options: TierOptions,
  tier: TierName,
  store: Store,
  request: Omit<LibraryRequest, "label" | "replay">,
  replay: (library: TierLibrary) => string,
): Promise<Outcome[]> {
  const log = options.log ?? (() => {});
  const outcomes: Outcome[] = [];
  for (const library of librariesFor(store, options.libraries)) {
    const share: LibraryRequest = { ...request, label: library.label, replay: replay(library) };
    log(`${tier} on ${library.label} (${library.path}): legs ${options.legs.join(", ")}`);
    try {
      // Always a process of its own: the library, and the cells' environment
      // (CELLS_EVIDENCE_DIR, CELLS_REPORT_DIR), are the process's, never shared with the caller.
      const result = await libraryChild(share, library.path, log);
      // On its own engine the store ran on no library of ours: the version the share's
      // process loaded (its judge's) is not the store's, so it is not reported as such.
      const ours = library.label !== "own" && library.label !== "none";
      outcomes.push(
        ...result.outcomes.map(({ sqliteVersion, ...rest }) =>
          ours && sqliteVersion !== undefined ? { ...rest, sqliteVersion } : rest
        ),
      );
      if (result.survivors?.length) {
        const leg = options.legs.join(",");
        outcomes.push(survivorsOutcome(result.survivors, { tier, leg, library: library.label }));
      }
    } catch (error) {
      if (error instanceof JudgingStalledError) {
        outcomes.push(
          ...stalledOutcomes(error, {
            legs: options.legs,
            tier,
            library: library.label,
            ...(request.cells ? { cells: request.cells } : {}),
          }),
        );
        continue;
      }
      const reason = error instanceof Error ? error.message : String(error);
      outcomes.push(...options.legs.map((leg) => ({
        clause: "run",
        tier,
        leg,
        library: library.label,
        status: "ERROR" as const,
        reason,
        judged: 0,
      })));
    }
  }
  return outcomes;
}

/**
 * A stalled share's outcomes: a FAIL of the clause and leg it stalled in (every leg when it
 * is not known), an ERROR for the rest of the share (each power-loss cell of it), whose
 * results went with it.
 */
function stalledOutcomes(
  error: JudgingStalledError,
  at: { legs: readonly LegName[]; tier: TierName; library: string; cells?: readonly number[] },
): Outcome[] {
  const { leg, clause, cell } = error.stalled;
  const cells = at.tier === "powerloss-cells" ? powerLossCellsOf(at.cells) : [undefined];
  return at.legs.flatMap((l) =>
    cells.map((c): Outcome => {
      const row = { tier: at.tier, leg: l, library: at.library };
      const here = (leg === undefined || l === leg) && (c === undefined || c === cell);
      if (!here) {
        const reason = `Not judged: the library's run was killed${
          leg !== undefined ? ` on leg ${leg}` : ""
        }: ${error.message}`;
        return {
          ...row,
          clause: c !== undefined ? `${c} power-loss cell` : "run",
          ...(c !== undefined ? { cell: c } : {}),
          status: "ERROR",
          reason,
          judged: 0,
        };
      }
      return {
        ...row,
        clause: clause ?? "run",
        ...(cell !== undefined ? { cell } : {}),
        status: "FAIL",
        reason: error.message,
        checks: [error.message],
        judged: 1,
      };
    })
  );
}

/** The tier's run: RAN when something was judged, else SKIP with the first reason given. */
function finish(tier: TierName, started: number, results: Outcome[]): TierOutcome {
  const seconds = (performance.now() - started) / 1000;
  const judged = results.some((r) => (r.judged ?? 0) > 0 || r.status === "FAIL");
  if (judged) return { run: { tier, status: "RAN", seconds }, results };
  const reason = results.find((r) => r.reason)?.reason ?? "nothing was judged";
  return { run: { tier, status: "SKIP", reason, seconds }, results };
}

function skipped(tier: TierName, reason: string, skipKind?: SkipKind): TierOutcome {
  return {
    run: { tier, status: "SKIP", reason, ...(skipKind ? { skipKind } : {}), seconds: 0 },
    results: [],
  };
}

/** What every tier starts from: the target, the seed, the store as probed, the clock. */
interface TierStart {
  target: string;
  seed: number;
  store: Store;
  started: number;
  /** The library request's fields every tier shares. */
  request: Omit<LibraryRequest, "label" | "replay" | "tier">;
}

/**
 * Starts a tier: the recorder built where it needs one and the store probed once; an
 * outcome instead when the tier ends there (no recorder: a SKIP; the store does not open:
 * a FAIL per leg, its own error first).
 */
async function startTier(
  tier: TierName,
  options: TierOptions,
  needsRecorder: boolean,
): Promise<TierStart | TierOutcome> {
  const started = performance.now();
  const target = targetSpecifier(options.target);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  if (needsRecorder) {
    const built = await buildRecorder();
    if (!built.ok) return skipped(tier, built.reason);
  }
  const store = await probeStore(target, options.libraries[0]!.path, seed);
  if (store.failed) {
    return {
      run: { tier, status: "RAN", seconds: 0 },
      results: errorOutcomes(options, tier, store.failed),
    };
  }
  const request = {
    target,
    legs: options.legs,
    seed,
    quick: options.quick,
    evidenceDir: options.evidenceDir,
    ...(options.jobs !== undefined ? { jobs: options.jobs } : {}),
    ...(options.cells ? { cells: options.cells } : {}),
    ...(options.judgingDeadlineMs !== undefined
      ? { judgingDeadlineMs: options.judgingDeadlineMs }
      : {}),
  };
  return { target, seed, store, started, request };
}

/**
 * The crash sweep as a tier: named points (`sweep`), or every recorded file-system call
 * under SIGKILL (`syscalls-crash`) or power loss (`syscalls-power-loss`), on every leg ×
 * library asked for.
 *
 * @param options Target, tier, legs, libraries, quick, evidence folder, seed, jobs, cells.
 * @returns The tier's run and an outcome per clause × leg × library.
 */
export async function sweepTier(options: SweepTierOptions): Promise<TierOutcome> {
  const tier = options.tier ?? "sweep";
  const start = await startTier(tier, options, tier !== "sweep");
  if ("run" in start) return start;
  if (tier === "sweep" && start.store.crashPoints === 0) {
    return skipped(
      tier,
      "the target declares no crash points (export crashPoints() from the target module to be swept; the syscalls tiers need none)",
      "no-crash-points",
    );
  }
  const flag = tier === "syscalls-crash"
    ? " --syscalls"
    : tier === "syscalls-power-loss"
    ? " --syscalls --power-loss"
    : "";
  const results = await eachLibrary(options, tier, start.store, {
    ...start.request,
    tier,
    ...(options.points ? { points: options.points } : {}),
    ...(options.calls ? { calls: options.calls } : {}),
  }, (library) => `deno task sweep${flag} --target ${start.target}${librariesFlag(library)}`);
  return finish(tier, start.started, results);
}

/**
 * The power-loss cells (1, 3, 4, 5, 8 to 12) as a tier, on every leg × library asked for: states,
 * torn states and resumes judged per cell, a FAIL with its checks and, for a known
 * pattern, its cause and fix.
 *
 * @param options Target, legs, libraries, quick, evidence folder, seed, cells.
 * @returns The tier's run and an outcome per cell × leg × library.
 */
export async function powerLossCellsTier(options: PowerLossCellsTierOptions): Promise<TierOutcome> {
  const tier = "powerloss-cells";
  const start = await startTier(tier, options, true);
  if ("run" in start) return start;
  const results = await eachLibrary(options, tier, start.store, {
    ...start.request,
    tier,
    ...(options.powerLoss ? { powerLoss: options.powerLoss } : {}),
  }, (library) => `deno task powerloss-cells --target ${start.target}${librariesFlag(library)}`);
  return finish(tier, start.started, results);
}
