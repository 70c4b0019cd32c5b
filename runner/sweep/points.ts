/**
 * The deterministic crash sweep as a function ({@linkcode sweep}); `main.ts` is its
 * command line (`deno task sweep`). Random kill timing finds what it happens to hit; the
 * sweep moves the crash forward one named point at a time (as SQLite's own crash tests
 * do) and checks every state it leaves.
 *
 * - **Point sweep**: for every crash point of the target (`crashPoints()`) × occurrence
 *   k in {1, 2, 3} × honoured leg, a child (`_child.ts`) runs the program that owns the
 *   point (its operation at least three times, `_program.ts`) on a copy of a small
 *   seeded store, with `SESSION_DB_CRASH_AT=<point>@<k>`, journaling an intent before
 *   each operation and an acknowledgement after it. The child must die by SIGKILL in an
 *   operation that owns the point.
 * - **Bounded sequences** (`_plan.ts`): every sequence of up to 3 operations from
 *   {append, batch append, rotate, rewind, fork, claim, outbox step}, crashed at every
 *   crash point (and every occurrence) of its last operation. A seeded sample by
 *   default; `--full` for the whole space (the sizes are printed).
 * - **Oracle** (`_oracle.ts`), on every recovered state: the child died where it was
 *   armed; the acknowledged operations are present with the results they acknowledged;
 *   the interrupted operation is all-or-nothing (the recovered state equals the
 *   uncrashed run's state without it or with it, never anything else); a point after
 *   COMMIT keeps the operation; the owning clause (no compression orphan, appends to a
 *   rotated parent refused); the store's invariants hold, `integrity_check` is `ok`, two
 *   recovery passes read the same. The journal mode the child ran in is observed at each
 *   kill, before anything reopens the files (`observeJournalMode`): a leg with any
 *   observation in another mode is SKIPPED with the observations (`legVerdict`), never
 *   passed.
 * - **Reproducible**: the seed (message texts, the sample) is printed; `--seed N`
 *   replays it; `--state <id>` replays one state. A failing state keeps its directory
 *   (the crashed files before recovery, journals, stderr, `evidence.json`) with the
 *   exact command that replays it (`_run_state.ts`).
 *
 * Power loss (`--power-loss`, `_power_loss.ts`): a SIGKILL leaves the page cache intact,
 * so the plain sweep can never show a commit lost to power loss. The power-loss variant
 * runs each crash child under the LD_PRELOAD file-system call recorder, keeps the start
 * state as a baseline, and evaluates the same oracle on the last-sync image
 * (`recorder/crash_states.ts`, profile posix) instead of the files the dead child left:
 * every acknowledged operation present with its result (durability), the interrupted
 * one absent or complete (and present when the point is after COMMIT), invariants and
 * integrity. `--syscalls` (`_syscalls.ts`) crashes before every recorded call instead of
 * at named points, for stores that declare none.
 * {@linkcode CrashImage} is the hook (see `SweepOptions.crashImage`).
 *
 * @module
 */
import {
  type Leg,
  type LegName,
  LEGS,
  legVerdict,
  observeJournalMode,
} from "../../harness/legs.ts";
import { RunDir } from "../../harness/evidence.ts";
import { sqliteLibraryPath, sqliteVersion } from "../../session_db/sqlite/database.ts";
import { loadTarget, type StoreOptions, targetSpecifier } from "../../cells/target.ts";
import { declaredPermissions } from "../../cells/target_access.ts";
import {
  parseStateId,
  type PlannedState,
  planPointStates,
  planSequenceStates,
  sample,
  selected,
} from "./_plan.ts";
import type { SweepStore } from "./_program.ts";
import { legAudit, legLines, legReport } from "./_leg_report.ts";
import {
  type LegContext,
  REFERENCE_TARGET,
  runState,
  settle,
  spawnSweepChild,
  type StateOutcome,
} from "./_run_state.ts";
import type { LegSweep, SweepOptions, SweepReport } from "./_types.ts";

export type { LegName } from "../../harness/legs.ts";
export type {
  CrashImage,
  CrashImageResult,
  LegSweep,
  SweepFailure,
  SweepOptions,
  SweepReport,
} from "./_types.ts";

async function sweepLeg(
  name: LegName,
  target: string,
  options: SweepOptions,
  seed: number,
): Promise<LegSweep> {
  const started = performance.now();
  const log = options.log ?? console.log;
  const leg: Leg = { name, library: sqliteLibraryPath(), sqliteVersion: sqliteVersion() };
  const root = await RunDir.create(`sweep-${name}`);
  const template = root.file("template.db");
  const module = await loadTarget(target);
  const permissions = await declaredPermissions(target);
  const storeOptions: StoreOptions = name === "default" ? {} : { journalMode: name };
  const ctx: LegContext = {
    leg,
    target,
    seed,
    root,
    template,
    openStore: async (path) => await module.openStore(path, storeOptions) as SweepStore,
    references: new Map(),
    keepEvidence: options.keepEvidence ?? true,
    ...(options.crashImage ? { crashImage: options.crashImage } : {}),
    ...(permissions ? { permissions } : {}),
  };
  const empty: LegSweep = {
    leg: name,
    status: "SKIP",
    pointsTotal: 0,
    pointsCovered: 0,
    uncovered: [],
    notApplicable: [],
    pointStates: 0,
    sequenceStates: 0,
    sequenceSpace: { sequences: 0, states: 0 },
    states: 0,
    matched: { without: 0, with: 0, unchanged: 0 },
    failures: [],
    seconds: 0,
    meanChildMs: 0,
    meanCheckMs: 0,
  };

  // Seed the template in a child on the leg (as the cells' probe does), then audit it.
  const setup = spawnSweepChild(ctx, root.path, ["setup", template, String(seed)]);
  if (!await settle(setup) || !setup.exited?.success) {
    const reason = `the store could not be seeded on leg ${name}: ${setup.describe()}`;
    if (ctx.keepEvidence) await root.finish(false, { leg: name, reason });
    else await Deno.remove(root.path, { recursive: true }).catch(() => {});
    log(`leg ${name.padEnd(7)} FAIL: ${reason}`);
    return { ...empty, status: "RUN", reason, seconds: (performance.now() - started) / 1000 };
  }
  const { methods, crashPoints } = JSON.parse(setup.stdout.trim().split("\n").at(-1)!) as {
    methods: string[];
    crashPoints: string[];
  };
  // The seeded store at rest, then every kill (in `runState`): the leg is honoured only
  // when each observation is in its mode (`legVerdict`, as the cells judge it).
  const seeded = observeJournalMode(template, "the seeded store, at rest", true);
  const setupAudit = legVerdict(leg, [seeded]);
  const onDisk = setupAudit.onDisk;
  if (!setupAudit.honoured) {
    const reason = setupAudit.reason!;
    await Deno.remove(root.path, { recursive: true });
    log(`leg ${name.padEnd(7)} SKIP: ${reason}`);
    return { ...empty, reason, onDisk, seconds: (performance.now() - started) / 1000 };
  }
  const points = [...new Set(crashPoints)];

  let planned: PlannedState[];
  let uncovered: { point: string; reason: string }[] = [];
  let notApplicable: { point: string; reason: string }[] = [];
  const sequencePlan = planSequenceStates(points, methods, options);
  const space = { sequences: sequencePlan.sequences, states: sequencePlan.states.length };
  const selectedPoints = points.filter((p) => selected(p, options.points));
  if (options.states?.length) {
    planned = options.states.map(parseStateId);
  } else {
    const pointPlan = planPointStates(points, methods, options);
    uncovered = pointPlan.uncovered;
    notApplicable = pointPlan.notApplicable;
    const mode = options.sequences ?? "sample";
    const sequences = mode === "none"
      ? []
      : mode === "full"
      ? sequencePlan.states
      : sample(sequencePlan.states, options.sample ?? 100, seed);
    planned = [...pointPlan.states, ...sequences];
  }
  if (planned.length === 0) {
    // Nothing to sweep is not a pass: say why instead.
    const reason = selectedPoints.length
      ? `no selected crash point is applicable: ${notApplicable.map((u) => u.reason).join("; ")}`
      : `the target lists no crash points${
        options.points?.length ? ` matching ${options.points.join(", ")}` : ""
      } (export crashPoints() from the target module to be swept)`;
    await Deno.remove(root.path, { recursive: true });
    log(`leg ${name.padEnd(7)} SKIP: ${reason}`);
    return {
      ...empty,
      reason,
      onDisk,
      notApplicable,
      seconds: (performance.now() - started) / 1000,
    };
  }
  const pointCount = planned.filter((s) => s.kind === "point").length;
  const sequenceCount = planned.length - pointCount;
  log(
    `leg ${
      name.padEnd(7)
    } (SQLite ${leg.sqliteVersion}, on-disk ${onDisk}): ${selectedPoints.length} ` +
      `crash points, ${pointCount} point states; sequences: ${space.sequences} up to length ${
        options.maxLength ?? 3
      }, full space ${space.states} states, this run ${sequenceCount}`,
  );

  const outcomes: StateOutcome[] = [];
  let next = 0;
  let lastProgress = performance.now();
  const worker = async () => {
    while (next < planned.length) {
      const n = next++;
      const outcome = await runState(ctx, planned[n]!, n);
      outcomes.push(outcome);
      if (outcome.failure) {
        log(`  FAIL ${outcome.state.id} [${name}]: ${outcome.failure.problems.join(" | ")}`);
        if (outcome.failure.evidence) log(`    evidence: ${outcome.failure.evidence}`);
        log(`    replay: ${outcome.failure.replay}`);
      }
      if (performance.now() - lastProgress > 5000) {
        lastProgress = performance.now();
        log(`  … ${outcomes.length}/${planned.length} states`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.jobs ?? 2) }, worker));
  // In plan order, whatever order the workers finished in: the report is reproducible.
  const order = new Map(planned.map((s, i) => [s, i]));
  outcomes.sort((a, b) => order.get(a.state)! - order.get(b.state)!);

  const result = legReport({
    leg: name,
    audit: legAudit(leg, seeded, outcomes),
    pointsSelected: options.states?.length
      ? undefined
      : selectedPoints.length - notApplicable.length,
    uncovered,
    notApplicable,
    sequenceSpace: space,
    imaged: ctx.crashImage !== undefined,
    seconds: (performance.now() - started) / 1000,
  }, outcomes);
  if (!ctx.keepEvidence) await Deno.remove(root.path, { recursive: true }).catch(() => {});
  else {
    await root.finish(result.failures.length === 0 && result.uncovered.length === 0, {
      library: leg.library,
      sqliteVersion: leg.sqliteVersion,
      target,
      seed,
      ...result,
    });
  }
  for (const line of legLines(result)) log(line);
  return result;
}

/**
 * Runs the crash sweep on the SQLite library this process loaded: for every honoured
 * leg, every selected crash point × occurrence, and the bounded sequences.
 *
 * @param options Target, legs, points, sequences, seed, jobs.
 * @returns The report: coverage, states, states per second, failures with evidence.
 * @throws {Error} When `SESSION_DB_CRASH_AT` is set in this process (the sweep arms each
 * child itself), or the default leg is asked for while `SESSION_DB_JOURNAL_MODE` is set.
 * @example
 * ```ts
 * import { sweep } from "./points.ts";
 * const report = await sweep({ legs: ["delete"], points: ["appendMessage:"], sequences: "none" });
 * console.log(report.legs[0]?.pointsCovered, report.statesPerSecond);
 * ```
 */
export async function sweep(options: SweepOptions = {}): Promise<SweepReport> {
  if (Deno.env.get("SESSION_DB_CRASH_AT")) {
    throw new Error(
      "Cannot sweep: SESSION_DB_CRASH_AT is set in this process (unset it; the sweep arms each child itself)",
    );
  }
  const legs = options.legs ?? LEGS;
  const envLeg = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  if (envLeg && legs.includes("default")) {
    throw new Error(
      `Cannot sweep the default leg: SESSION_DB_JOURNAL_MODE=${envLeg} is set in this process, so its own opens would not be on the default leg (unset it, or sweep --legs ${envLeg})`,
    );
  }
  const target = targetSpecifier(options.target ?? REFERENCE_TARGET);
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const log = options.log ?? console.log;
  log(
    `sweep: seed ${seed} (replay with --seed ${seed}); target ${target}; checking ${
      options.crashImage?.name ?? "the files the SIGKILLed child left"
    }`,
  );
  const started = performance.now();
  const results: LegSweep[] = [];
  for (const leg of legs) results.push(await sweepLeg(leg, target, options, seed));
  const seconds = (performance.now() - started) / 1000;
  const states = results.reduce((s, l) => s + l.states, 0);
  const failing = new Map<string, number>();
  for (const f of results.flatMap((l) => l.failures)) {
    failing.set(f.point, (failing.get(f.point) ?? 0) + 1);
  }
  return {
    target,
    seed,
    library: sqliteLibraryPath(),
    sqliteVersion: sqliteVersion(),
    image: options.crashImage?.name ?? "process crash (SIGKILL; the page cache survives)",
    legs: results,
    states,
    seconds,
    statesPerSecond: seconds > 0 ? states / seconds : 0,
    failingPoints: [...failing].map(([point, n]) => ({ point, states: n })),
    ok: results.some((l) => l.status === "RUN") &&
      results.every((l) =>
        l.status === "SKIP" || (l.failures.length === 0 && l.uncovered.length === 0 && !l.reason)
      ),
  };
}
