/**
 * The named-point crash sweep as a function ({@linkcode sweep}), on the SQLite library
 * this process loaded; {@linkcode sweepTier} (`tier.ts`) runs it per library and turns
 * it into typed results. Random kill timing finds what it happens to hit; the sweep
 * moves the crash forward one named point at a time (as SQLite's own crash tests do) and
 * checks every state it leaves.
 *
 * - **Point sweep**: for every crash point of the target (`crashPoints()`) × occurrence
 *   k in {1, 2, 3} × honoured leg, a child (`children/sweep.ts`) runs the program that
 *   owns the point (its operation at least three times, `_program.ts`) on a copy of a
 *   small seeded store, with `SESSION_DB_CRASH_AT=<point>@<k>`, journaling an intent
 *   before each operation and an acknowledgement after it. The child must die by
 *   SIGKILL in an operation that owns the point.
 * - **Bounded sequences** (`_plan.ts`): every sequence of up to 3 operations from
 *   {append, batch append, rotate, rewind, fork, claim, outbox step}, crashed at every
 *   crash point (and every occurrence) of its last operation. A seeded sample by
 *   default; `sequences: "full"` for the whole space.
 * - **Oracle** (`_oracle.ts`), on every recovered state: the child died where it was
 *   armed; the acknowledged operations are present with the results they acknowledged;
 *   the interrupted operation is all-or-nothing; a point after COMMIT keeps the
 *   operation; the owning clause; invariants, `integrity_check`, recovery determinism.
 *   The journal mode the child ran in is observed at each kill, before anything reopens
 *   the files: a leg with any observation in another mode is SKIPPED, never passed.
 * - **Reproducible**: the seed (message texts, the sample) is reported; a failing state
 *   keeps its directory with the exact command that replays it (`_run_state.ts`).
 *
 * Power loss (`crashImage`, `_last_sync.ts`): the same states evaluated on the last-sync
 * image instead of the files the SIGKILLed child left. `calls.ts` crashes before every
 * recorded file-system call instead of at named points, for stores that declare none.
 *
 * @example
 * ```ts ignore
 * import { sweep } from "./points.ts";
 * const report = await sweep({ legs: ["delete"], points: ["appendMessage:"], sequences: "none" });
 * console.log(report.legs[0]?.pointsCovered, report.statesPerSecond);
 * ```
 *
 * @module
 */
import {
  type JournalObservation,
  type Leg,
  type LegName,
  LEGS,
  legVerdict,
  observeJournalMode,
} from "../../../harness/legs.ts";
import { RunDir } from "../../../harness/evidence.ts";
import { sqliteLibraryPath, sqliteVersion } from "../../../session_db/sqlite/database.ts";
import { loadTarget, type StoreOptions, targetSpecifier } from "../../../cells/contract/target.ts";
import { declaredPermissions } from "../../../cells/contract/target_access.ts";
import {
  parseStateId,
  type PlannedState,
  planPointStates,
  planSequenceStates,
  sample,
  selected,
} from "../core/plan.ts";
import type { SweepStore } from "../core/program.ts";
import { legAudit, legLines, legReport } from "./leg_report.ts";
import { runState, type StateOutcome } from "./run_state.ts";
import { type LegContext, REFERENCE_TARGET, settle, spawnSweepChild } from "../core/state_child.ts";
import type { LegSweep, SweepOptions, SweepReport } from "../core/types.ts";
import { readReport } from "../../../internal/report_line.ts";

/** A leg that did not run: its reason and what is known. */
function emptyLeg(name: LegName, started: number, extra: Partial<LegSweep>): LegSweep {
  return {
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
    seconds: (performance.now() - started) / 1000,
    meanChildMs: 0,
    meanCheckMs: 0,
    ...extra,
  };
}

/** The leg's context: its run folder, template path, and the store opened in this process. */
async function legContext(
  name: LegName,
  target: string,
  options: SweepOptions,
  seed: number,
): Promise<LegContext> {
  const leg: Leg = { name, library: sqliteLibraryPath(), sqliteVersion: sqliteVersion() };
  const root = await RunDir.create(`sweep-${name}`);
  const module = await loadTarget(target);
  const permissions = await declaredPermissions(target);
  const storeOptions: StoreOptions = name === "default" ? {} : { journalMode: name };
  return {
    leg,
    target,
    seed,
    root,
    template: root.store("template"),
    openStore: async (path) => await module.openStore(path, storeOptions) as SweepStore,
    references: new Map(),
    keepEvidence: options.keepEvidence ?? true,
    ...(options.crashImage ? { crashImage: options.crashImage } : {}),
    ...(permissions ? { permissions } : {}),
  };
}

/** Seeds the template in a child on the leg (as the cells' probe does): its methods and points, or why not. */
async function seedTemplate(
  ctx: LegContext,
): Promise<{ methods: string[]; crashPoints: string[] } | { failed: string }> {
  const setup = spawnSweepChild(ctx, ["setup", ctx.template, String(ctx.seed)], {
    dir: ctx.root.path,
  });
  if (!await settle(setup) || !setup.exited?.success) {
    return { failed: `the store could not be seeded on leg ${ctx.leg.name}: ${setup.describe()}` };
  }
  return readReport<{ methods: string[]; crashPoints: string[] }>(setup.stdout) ??
    { failed: `the store could not be seeded on leg ${ctx.leg.name}: the child printed no report` };
}

/** The states to run on a leg, with the points no program reaches or the store lacks. */
function planLeg(
  points: readonly string[],
  methods: readonly string[],
  options: SweepOptions,
  seed: number,
) {
  const sequencePlan = planSequenceStates(points, methods, options);
  const space = { sequences: sequencePlan.sequences, states: sequencePlan.states.length };
  const selectedPoints = points.filter((p) => selected(p, options.points));
  if (options.states?.length) {
    return {
      planned: options.states.map(parseStateId),
      uncovered: [],
      notApplicable: [],
      space,
      selectedPoints,
    };
  }
  const pointPlan = planPointStates(points, methods, options);
  const mode = options.sequences ?? "sample";
  const sequences = mode === "none"
    ? []
    : mode === "full"
    ? sequencePlan.states
    : sample(sequencePlan.states, options.sample ?? 100, seed);
  return {
    planned: [...pointPlan.states, ...sequences],
    uncovered: pointPlan.uncovered,
    notApplicable: pointPlan.notApplicable,
    space,
    selectedPoints,
  };
}

/** Runs the planned states with `jobs` children in flight; the outcomes in plan order. */
async function runStates(
  ctx: LegContext,
  planned: readonly PlannedState[],
  options: SweepOptions,
  log: (line: string) => void,
): Promise<StateOutcome[]> {
  const outcomes: StateOutcome[] = [];
  let next = 0;
  let lastProgress = performance.now();
  const worker = async () => {
    while (next < planned.length) {
      const n = next++;
      const outcome = await runState(ctx, planned[n]!, n);
      outcomes.push(outcome);
      if (outcome.failure) {
        log(`  FAIL ${outcome.state.id} [${ctx.leg.name}]: ${outcome.failure.problems[0]}`);
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
  return outcomes.sort((a, b) => order.get(a.state)! - order.get(b.state)!);
}

async function sweepLeg(
  name: LegName,
  target: string,
  options: SweepOptions,
  seed: number,
): Promise<LegSweep> {
  const started = performance.now();
  const log = options.log ?? console.log;
  const ctx = await legContext(name, target, options, seed);
  const drop = () => Deno.remove(ctx.root.path, { recursive: true }).catch(() => {});
  const seeded = await seedTemplate(ctx);
  if ("failed" in seeded) {
    if (ctx.keepEvidence) await ctx.root.finish(false, { leg: name, reason: seeded.failed });
    else await drop();
    log(`leg ${name.padEnd(7)} FAIL: ${seeded.failed}`);
    return emptyLeg(name, started, { status: "RUN", reason: seeded.failed });
  }
  // The seeded store at rest, then every kill (in `runState`): the leg is honoured only
  // when each observation is in its mode (`legVerdict`, as the cells judge it).
  const atRest: JournalObservation = observeJournalMode(
    ctx.template,
    "the seeded store, at rest",
    true,
  );
  const setupAudit = legVerdict(ctx.leg, [atRest]);
  const onDisk = setupAudit.onDisk;
  if (!setupAudit.honoured) {
    await drop();
    log(`leg ${name.padEnd(7)} SKIP: ${setupAudit.reason}`);
    return emptyLeg(name, started, { reason: setupAudit.reason!, onDisk });
  }
  const points = [...new Set(seeded.crashPoints)];
  const plan = planLeg(points, seeded.methods, options, seed);
  if (plan.planned.length === 0) {
    // Nothing to sweep is not a pass: say why instead.
    const reason = plan.selectedPoints.length
      ? `no selected crash point is applicable: ${
        plan.notApplicable.map((u) => u.reason).join("; ")
      }`
      : `the target lists no crash points${
        options.points?.length ? ` matching ${options.points.join(", ")}` : ""
      } (export crashPoints() from the target module to be swept)`;
    await drop();
    log(`leg ${name.padEnd(7)} SKIP: ${reason}`);
    return emptyLeg(name, started, { reason, onDisk, notApplicable: plan.notApplicable });
  }
  const pointCount = plan.planned.filter((s) => s.kind === "point").length;
  log(
    `leg ${name.padEnd(7)} (SQLite ${ctx.leg.sqliteVersion}, on-disk ${onDisk}): ` +
      `${plan.selectedPoints.length} crash points, ${pointCount} point states; sequences: ` +
      `${plan.space.sequences} up to length ${options.maxLength ?? 3}, full space ` +
      `${plan.space.states} states, this run ${plan.planned.length - pointCount}`,
  );
  const outcomes = await runStates(ctx, plan.planned, options, log);
  const result = legReport({
    leg: name,
    audit: legAudit(ctx.leg, atRest, outcomes),
    pointsSelected: options.states?.length
      ? undefined
      : plan.selectedPoints.length - plan.notApplicable.length,
    uncovered: plan.uncovered,
    notApplicable: plan.notApplicable,
    sequenceSpace: plan.space,
    imaged: ctx.crashImage !== undefined,
    seconds: (performance.now() - started) / 1000,
    methods: seeded.methods,
  }, outcomes);
  if (!ctx.keepEvidence) await drop();
  else {
    await ctx.root.finish(result.failures.length === 0 && result.uncovered.length === 0, {
      library: ctx.leg.library,
      sqliteVersion: ctx.leg.sqliteVersion,
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
 * ```ts ignore
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
    ok: results.some((l) => l.status === "RUN" && l.states > 0) &&
      results.every((l) =>
        l.status === "SKIP" || (l.failures.length === 0 && l.uncovered.length === 0 && !l.reason)
      ),
  };
}
