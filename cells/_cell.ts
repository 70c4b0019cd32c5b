// The machinery every cell shares: the leg probe (skip with a reason when the leg is
// not honoured or the store lacks a feature), run directories, evidence and reports.
import { join } from "node:path";
import {
  type Child,
  reapAll,
  reapWithoutSurvivors,
  spawnChild,
  type SpawnOptions,
} from "../harness/child.ts";
import { treeLibraries } from "../harness/process_tree.ts";
import {
  currentLeg,
  type JournalObservation,
  type Leg,
  legEnv,
  legVerdict,
  observeJournalMode,
} from "../harness/legs.ts";
import { RunDir } from "../harness/evidence.ts";
import { HarnessError, isHarnessError } from "../harness/harness_error.ts";
import { type ChildPermissions, widenedFlags } from "../harness/permissions.ts";
import { runSeed, seededRandom } from "../harness/seeded_random.ts";
import { targetSpecifier } from "./target.ts";
import { declaredPermissions, missingPrograms, targetAccess } from "./target_access.ts";
import { killWhenReady } from "./_kill.ts";
import type { CellOptions } from "./cell_options.ts";
import { type CellReport, DEFAULT_LEG_ONLY } from "./cell_report.ts";

/** The default overall deadline of one cell: far above a run on a loaded 2-core machine. */
export const CELL_DEADLINE_MS = 10 * 60_000;

/** What a cell's run gets. */
export interface CellRun {
  /** The leg. */
  leg: Leg;
  /** The target specifier. */
  target: string;
  /** The run directory (kept on failure). */
  run: RunDir;
  /** Figures for the evidence file and the report. */
  figures: Record<string, unknown>;
  /** Spawns a child script of the cells with the leg's environment and the target's access. */
  spawn(
    script: string,
    args: string[],
    extra?: Partial<SpawnOptions>,
  ): ReturnType<typeof spawnChild>;
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
}

/** A cell's definition. */
export interface CellSpec {
  /** The cell number. */
  id: number;
  /** Short name, e.g. `prefix durability`. */
  title: string;
  /** `default`: runs on the default leg only (say why in `legReason`). */
  legs: "all" | "default";
  /** Why the cell runs on the default leg only. */
  legReason?: string;
  /** Store methods the cell needs; a store without them is skipped. */
  requires: readonly string[];
  /** Whether its children may run under the LD_PRELOAD recorder (needs an unscoped run). */
  preloads?: boolean;
  /** Groups of methods of which the cell needs at least one each (else skipped). */
  requiresOneOf?: readonly (readonly string[])[];
  /** The probe itself: throws on a violated clause. */
  run(ctx: CellRun, t: Deno.TestContext): Promise<void>;
}

interface Probe {
  onDisk: string;
  methods: string[];
  /** The leg was not honoured: a reason to skip. */
  notHonoured?: string;
  /** The store could not even open on this leg: a failure. */
  crashed?: string;
}

const probes = new Map<string, Promise<Probe>>();

/** A failed check: its one-line text and whether the suite (not the store) failed. */
interface FailedCheck {
  line: string;
  harness: boolean;
}

/** `t` whose steps record the failure of their check before rethrowing it. */
function recordingContext(t: Deno.TestContext, failures: FailedCheck[]): Deno.TestContext {
  return new Proxy(t, {
    get(target, key) {
      if (key !== "step") {
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (name: string, fn: (inner: Deno.TestContext) => unknown) =>
        target.step(name, async (inner) => {
          try {
            await fn(inner);
          } catch (error) {
            failures.push({
              line: `${name}: ${error instanceof Error ? error.message : String(error)}`,
              harness: isHarnessError(error),
            });
            throw error;
          }
        });
    },
  });
}

/** A child entry script of the cells (`cells/children/`). */
function childScript(name: string): string {
  return new URL(`./children/${name}`, import.meta.url).href;
}

function spawnFor(
  leg: Leg,
  target: string,
  run: RunDir,
  permissions: ChildPermissions | undefined,
) {
  const access = targetAccess(target);
  const scriptAccess = targetAccess(new URL("./child_runtime.ts", import.meta.url).href);
  return (script: string, args: string[], extra: Partial<SpawnOptions> = {}) =>
    spawnChild({
      script: childScript(script),
      args: [target, ...args],
      runDir: run.path,
      library: leg.library,
      ...extra,
      env: { ...legEnv(leg), ...extra.env },
      read: [...(access.read ?? []), ...(scriptAccess.read ?? []), ...(extra.read ?? [])],
      importHosts: [...(access.importHosts ?? []), ...(scriptAccess.importHosts ?? [])],
      ...(access.config ? { config: access.config } : {}),
      ...(permissions ? { permissions } : {}),
    });
}

/**
 * Opens the target in a child on this leg once, kills it while it holds the store open,
 * and observes the mode it ran in: no clean close comes first, so a store that switches
 * modes in `close()` cannot pass for one that honours the leg.
 */
function probe(
  leg: Leg,
  target: string,
  openDeadlineMs: number,
  permissions: ChildPermissions | undefined,
): Promise<Probe> {
  const key = `${target}|${leg.name}|${leg.library}`;
  let result = probes.get(key);
  if (!result) {
    result = (async () => {
      const run = await RunDir.create("probe");
      const db = run.file("probe.db");
      const ready = run.file("probe.ready");
      const child = spawnFor(leg, target, run, permissions)("probe.ts", [db, ready]);
      try {
        try {
          await killWhenReady(
            child,
            ready,
            `the store of ${target} to open and take 3 appends (open deadline ${openDeadlineMs} ms: raise CELLS_OPEN_DEADLINE_MS or openDeadlineMs for a slow store)`,
            openDeadlineMs,
          );
        } catch (error) {
          return {
            onDisk: "unknown",
            methods: [],
            crashed: error instanceof Error ? error.message : String(error),
          };
        }
        const said = JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}") as {
          methods?: string[];
          journalModeReason?: string;
        };
        const audit = legVerdict(leg, [observeJournalMode(db, "probe (killed while open)", true)]);
        const why = said.journalModeReason && said.journalModeReason !== "as requested"
          ? ` (the store: ${said.journalModeReason})`
          : "";
        return {
          onDisk: audit.onDisk,
          methods: said.methods ?? [],
          ...(audit.reason ? { notHonoured: `${audit.reason}${why}` } : {}),
        };
      } finally {
        await Deno.remove(run.path, { recursive: true }).catch(() => {});
      }
    })();
    probes.set(key, result);
  }
  return result;
}

/** The leg probe's open deadline: the option, else `CELLS_OPEN_DEADLINE_MS`, else 30 s. */
function openDeadline(options: CellOptions): number {
  if (options.openDeadlineMs !== undefined) return options.openDeadlineMs;
  const raw = Deno.env.get("CELLS_OPEN_DEADLINE_MS");
  if (raw === undefined || raw === "") return 30_000;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new Error(
      `Invalid CELLS_OPEN_DEADLINE_MS "${raw}": use a whole number of milliseconds above 0`,
    );
  }
  return ms;
}

/** `cell<id>-<leg>-<stem>`: the name of a report and of the files beside it. */
function reportName(cell: number, leg: string, stem: string): string {
  return `cell${cell}-${leg}-${stem}`;
}

function writeReport(report: CellReport, stem: string): void {
  const dir = Deno.env.get("CELLS_REPORT_DIR");
  if (!dir) return;
  Deno.mkdirSync(dir, { recursive: true });
  const name = `${reportName(report.cell, report.leg, stem)}.json`;
  Deno.writeTextFileSync(join(dir, name), JSON.stringify(report, null, 2) + "\n");
}

function labelOf(target: string): string {
  return target.split("/").at(-1)?.replace(/\.[jt]s$/, "") ?? target;
}

/**
 * Builds a cell's test definitions for one target and leg. The leg is probed first
 * (a child opens the store on that leg and the on-disk mode is audited): a leg the
 * store does not honour, or a store without the cell's methods, gives an ignored
 * test whose name carries the reason.
 *
 * @param spec The cell.
 * @param options Target and leg.
 * @returns The test definitions.
 */
export async function defineCell(
  spec: CellSpec,
  options: CellOptions,
): Promise<Deno.TestDefinition[]> {
  const leg = options.leg ?? currentLeg();
  const target = targetSpecifier(options.target);
  const label = options.label ?? labelOf(target);
  const base =
    `cell ${spec.id} ${spec.title} [${label} · ${leg.name} · SQLite ${leg.sqliteVersion}]`;
  const stem = crypto.randomUUID().slice(0, 8);
  // A target that cannot load (or declares bad permissions) fails the cell, as a store
  // that cannot open does; the tools refuse it earlier as a usage error.
  let permissions: ChildPermissions | undefined;
  let unloadable: string | undefined;
  let missing: string[] = [];
  try {
    permissions = await declaredPermissions(target);
    missing = await missingPrograms(target);
  } catch (error) {
    unloadable = error instanceof Error ? error.message : String(error);
  }
  // What the target's children got beyond the narrow scope: named in every report.
  const widened = widenedFlags(permissions);
  const report = (
    status: CellReport["status"],
    reason?: string,
    figures = {},
    evidence?: string,
    checks?: string[],
  ) =>
    writeReport({
      cell: spec.id,
      title: spec.title,
      target,
      leg: leg.name,
      sqliteVersion: leg.sqliteVersion,
      library: leg.library,
      status,
      ...(reason ? { reason } : {}),
      ...(checks?.length ? { checks } : {}),
      figures,
      ...(widened.length ? { childPermissions: widened } : {}),
      // The programs its children may start (the store's workers), named in every report.
      ...(permissions?.run?.length
        ? { engine: { kind: "unknown" as const, programs: [...permissions.run] } }
        : {}),
      ...(evidence ? { evidence } : {}),
    }, stem);

  let skip: string | undefined;
  if (missing.length) {
    skip = `the store needs ${missing.join(", ")}, not found on this machine's PATH`;
  } else if (spec.legs === "default" && leg.name !== "default") {
    skip = `${DEFAULT_LEG_ONLY}: ${spec.legReason ?? "by design"}`;
  } else {
    const probed: Probe = unloadable
      ? { onDisk: "unknown", methods: [], crashed: unloadable }
      : await probe(leg, target, openDeadline(options), permissions);
    if (probed.crashed) {
      const message = `The store could not be opened on leg ${leg.name}: ${probed.crashed}`;
      return [{
        name: base,
        fn() {
          report("FAIL", message);
          throw new Error(message);
        },
      }];
    }
    if (probed.notHonoured) skip = probed.notHonoured;
    else {
      const missing = [
        ...spec.requires.filter((m) => !probed.methods.includes(m)),
        ...(spec.requiresOneOf ?? []).filter((group) =>
          !group.some((m) => probed.methods.includes(m))
        ).map((group) => `one of ${group.join(" or ")}`),
      ];
      if (missing.length) skip = `the store lacks ${missing.join(", ")}`;
    }
  }
  if (skip) {
    report("SKIP", skip);
    return [{ name: `${base} SKIP: ${skip}`, ignore: true, fn: () => {} }];
  }

  return [{
    name: base,
    // The cell narrows its own permissions: no network, only deno as a subprocess,
    // FFI only for the leg's library, remote imports only from a remote target's host
    // (asking for more than the test process holds fails every cell).
    permissions: {
      net: false,
      read: true,
      write: true,
      env: true,
      sys: true,
      import: targetAccess(target).importHosts ?? false,
      // Deno refuses LD_PRELOAD in a child's environment without an unscoped --allow-run.
      run: spec.preloads ? true : [Deno.execPath(), ...(permissions?.run ?? [])],
      // The store opens in this process too (setups, recovered-state checks); libc
      // serves the process trees (harness/process_tree.ts).
      ffi: [leg.library, ...(permissions?.ffi ?? []), ...treeLibraries()],
    },
    sanitizeResources: false,
    sanitizeOps: false,
    async fn(t) {
      const run = await RunDir.create(`cell${spec.id}`);
      const seed = runSeed(options.seed);
      const figures: Record<string, unknown> = {
        seed,
        ...(widened.length ? { childPermissions: widened } : {}),
      };
      // Every child of the run, so that none outlives the cell, even past its deadline.
      const children: Child[] = [];
      const spawn = spawnFor(leg, target, run, permissions);
      let overdue: string | undefined;
      const observations: JournalObservation[] = [];
      const ctx: CellRun = {
        leg,
        target,
        run,
        figures,
        spawn(script, args, extra) {
          if (overdue) throw new Error(`Cannot spawn ${script}: ${overdue}`);
          const child = spawn(script, args, extra);
          children.push(child);
          return child;
        },
        note(name, value) {
          figures[name] = value;
        },
        attach(name, text) {
          Deno.writeTextFileSync(run.file(name), text);
          const dir = Deno.env.get("CELLS_REPORT_DIR");
          if (dir) {
            Deno.mkdirSync(dir, { recursive: true });
            Deno.writeTextFileSync(
              join(dir, `${reportName(spec.id, leg.name, stem)}.${name}`),
              text,
            );
          }
          const attached = figures.attachments;
          figures.attachments = [...(Array.isArray(attached) ? attached : []), name];
        },
        seed,
        random: seededRandom(seed),
        observeLeg(db, at, quiescent = false) {
          const observation = observeJournalMode(db, at, quiescent);
          observations.push(observation);
          return observation;
        },
      };
      // Every kill's observation, as counts per mode, for the report.
      const observed = () => {
        const modes: Record<string, number> = {};
        for (const o of observations) modes[o.mode] = (modes[o.mode] ?? 0) + 1;
        return modes;
      };
      const evidence = () => ({
        cell: spec.id,
        title: spec.title,
        target,
        leg: leg.name,
        library: leg.library,
        sqliteVersion: leg.sqliteVersion,
        ...figures,
      });
      const deadlineMs = options.overallDeadlineMs ?? CELL_DEADLINE_MS;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          overdue = `cell ${spec.id} passed its overall deadline of ${deadlineMs} ms`;
          const running = children.filter((child) => !child.exited);
          reject(
            new Error(
              `Cell ${spec.id} ${spec.title} did not finish within its overall deadline of ${deadlineMs} ms (raise overallDeadlineMs on a slow machine); ${running.length} child(ren) still running${
                running.map((child) => `\n${child.describe()}`).join("")
              }`,
            ),
          );
        }, deadlineMs);
      });
      // Under `deno test` a failed step returns false instead of throwing: record each
      // failure so the cell itself fails, reports FAIL (ERROR when only the suite failed)
      // and keeps its evidence.
      const failedChecks: FailedCheck[] = [];
      try {
        const probing = spec.run(ctx, recordingContext(t, failedChecks)).then(() => {
          if (failedChecks.length) {
            const text = `Failed check(s):\n${failedChecks.map((f) => f.line).join("\n")}`;
            // Only the suite failed: an ERROR, never a verdict on the store.
            throw failedChecks.every((f) => f.harness) ? new HarnessError(text) : new Error(text);
          }
        });
        // Past the deadline the probe is abandoned: its later failure is not news.
        probing.catch(() => {});
        await Promise.race([probing, deadline]);
        // Nothing the cell's children started may outlive it: a survivor is a FAIL.
        await reapWithoutSurvivors(children, `cell ${spec.id} ${spec.title}`);
        if (observations.length) figures.legObservations = observed();
      } catch (error) {
        if (observations.length) figures.legObservations = observed();
        clearTimeout(timer);
        await reapAll(children);
        console.error(
          `cell ${spec.id} failed with seed ${seed}: CELLS_SEED=${seed} replays its random choices`,
        );
        const message = error instanceof Error ? error.message : String(error);
        const status = isHarnessError(error) ? "ERROR" : "FAIL";
        const checks = failedChecks.length
          ? failedChecks.map((f) => f.line)
          : [message.split("\n")[0] ?? message];
        if (options.keepEvidence === false) {
          await Deno.remove(run.path, { recursive: true }).catch(() => {});
          report(status, message, figures, undefined, checks);
          throw error;
        }
        const kept = await run.finish(false, {
          ...evidence(),
          error: error instanceof Error ? error.stack ?? error.message : String(error),
        });
        report(status, message, figures, kept, checks);
        throw error;
      }
      clearTimeout(timer);
      await reapAll(children);
      const verdict = observations.length ? legVerdict(leg, observations) : undefined;
      if (verdict && !verdict.honoured) {
        // The checks held, but about a mode the leg does not advertise: not evidence.
        const reason = verdict.reason!;
        const kept = await run.finish(false, { ...evidence(), skipped: reason });
        report("SKIP", reason, figures, kept);
        throw new Error(`SKIP, not evidence: ${reason}; the run is kept in ${kept}`);
      }
      const kept = await run.finish(true, evidence());
      console.log(`  ${spec.title} evidence: ${JSON.stringify(figures)}`);
      report("PASS", undefined, figures, kept);
    },
  }];
}
