// The machinery every cell shares: the leg probe (skip with a reason when the leg is
// not honoured or the store lacks a feature), run directories, evidence and reports.
import { fileURLToPath as fromFileUrl } from "node:url";
import { dirname, join } from "node:path";
import { type Child, reapAll, spawnChild, type SpawnOptions } from "../harness/child.ts";
import { currentLeg, effectiveModeOrSkip, type Leg, legEnv } from "../harness/legs.ts";
import { RunDir } from "../harness/evidence.ts";
import { runSeed, seededRandom } from "../harness/seeded_random.ts";
import { targetSpecifier } from "./target.ts";

/**
 * Options every cell takes.
 *
 * @example
 * ```ts
 * import type { CellOptions } from "./_cell.ts";
 * import { registerCells } from "./register.ts";
 * const options: CellOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
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
   * The whole cell's deadline, every child and wait included (default 10 minutes):
   * past it the cell fails with the stderr of the children still running, and they are
   * killed.
   */
  overallDeadlineMs?: number;
}

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
  /** The run's seed (noted as `seed`; `CELLS_SEED=<seed>` replays its random choices). */
  seed: number;
  /** The run's seeded random numbers in [0, 1): use it for every random choice. */
  random(): number;
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
  /** The probe itself: throws on a violated clause. */
  run(ctx: CellRun, t: Deno.TestContext): Promise<void>;
}

/**
 * A cell's outcome, as written to the report directory.
 *
 * @example
 * ```ts
 * import type { CellReport } from "./_cell.ts";
 * function line(report: CellReport): string {
 *   const why = report.reason ? ` (${report.reason})` : "";
 *   return `cell ${report.cell} ${report.title}, ${report.leg} leg: ${report.status}${why}`;
 * }
 * ```
 */
export interface CellReport {
  /** The cell number. */
  cell: number;
  /** Its title. */
  title: string;
  /** The target. */
  target: string;
  /** The leg name. */
  leg: string;
  /** The SQLite version. */
  sqliteVersion: string;
  /** The library path. */
  library: string;
  /** PASS, FAIL or SKIP. */
  status: "PASS" | "FAIL" | "SKIP";
  /** Why it failed or was skipped. */
  reason?: string;
  /** Evidence figures. */
  figures: Record<string, unknown>;
  /** Where the evidence was kept. */
  evidence?: string;
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

/**
 * The `deno.json(c)` nearest above a target's folder: its import map is what the
 * target's bare specifiers resolve through, in the children as in the project.
 */
function nearestConfig(dir: string): string | undefined {
  for (let current = dir;; current = dirname(current)) {
    for (const name of ["deno.json", "deno.jsonc"]) {
      const path = join(current, name);
      try {
        if (Deno.statSync(path).isFile) return path;
      } catch {
        // Missing or unreadable: keep looking further up.
      }
    }
    if (dirname(current) === current) return undefined;
  }
}

/** `t` whose steps record the failure of their check before rethrowing it. */
function recordingContext(t: Deno.TestContext, failures: string[]): Deno.TestContext {
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
            failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
            throw error;
          }
        });
    },
  });
}

/** Read access a child needs for the target module (its folder when it is a file). */
export function targetAccess(target: string): Partial<SpawnOptions> {
  const url = new URL(target);
  if (url.protocol === "file:") {
    const dir = dirname(fromFileUrl(url));
    const config = nearestConfig(dir);
    return { read: [dir], ...(config ? { config } : {}) };
  }
  if (url.protocol === "http:" || url.protocol === "https:") return { importHosts: [url.host] };
  return {};
}

function childScript(name: string): string {
  return new URL(name, import.meta.url).href;
}

function spawnFor(leg: Leg, target: string, run: RunDir) {
  const access = targetAccess(target);
  const scriptAccess = targetAccess(childScript("_child.ts"));
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
    });
}

/** Opens the target in a child on this leg once and reads what it left on disk. */
function probe(leg: Leg, target: string): Promise<Probe> {
  const key = `${target}|${leg.name}|${leg.library}`;
  let result = probes.get(key);
  if (!result) {
    result = (async () => {
      const run = await RunDir.create("probe");
      const db = run.file("probe.db");
      const child = spawnFor(leg, target, run)("_probe.ts", [db]);
      const status = await child.status;
      try {
        if (!status.success) {
          return { onDisk: "unknown", methods: [], crashed: child.describe() };
        }
        const said = JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}") as {
          methods?: string[];
          journalModeReason?: string;
        };
        const audit = effectiveModeOrSkip(db, leg);
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

function writeReport(report: CellReport): void {
  const dir = Deno.env.get("CELLS_REPORT_DIR");
  if (!dir) return;
  Deno.mkdirSync(dir, { recursive: true });
  const name = `cell${report.cell}-${report.leg}-${crypto.randomUUID().slice(0, 8)}.json`;
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
  const report = (status: CellReport["status"], reason?: string, figures = {}, evidence?: string) =>
    writeReport({
      cell: spec.id,
      title: spec.title,
      target,
      leg: leg.name,
      sqliteVersion: leg.sqliteVersion,
      library: leg.library,
      status,
      ...(reason ? { reason } : {}),
      figures,
      ...(evidence ? { evidence } : {}),
    });

  let skip: string | undefined;
  if (spec.legs === "default" && leg.name !== "default") {
    skip = `default leg only: ${spec.legReason ?? "by design"}`;
  } else {
    const probed = await probe(leg, target);
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
      const missing = spec.requires.filter((m) => !probed.methods.includes(m));
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
      run: [Deno.execPath()],
      ffi: [leg.library],
    },
    sanitizeResources: false,
    sanitizeOps: false,
    async fn(t) {
      const run = await RunDir.create(`cell${spec.id}`);
      const seed = runSeed(options.seed);
      const figures: Record<string, unknown> = { seed };
      // Every child of the run, so that none outlives the cell, even past its deadline.
      const children: Child[] = [];
      const spawn = spawnFor(leg, target, run);
      let overdue: string | undefined;
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
        seed,
        random: seededRandom(seed),
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
      try {
        // Under `deno test` a failed step returns false instead of throwing: record
        // each failure so the cell itself fails, reports FAIL and keeps its evidence.
        const failedChecks: string[] = [];
        const probing = spec.run(ctx, recordingContext(t, failedChecks)).then(() => {
          if (failedChecks.length) {
            throw new Error(`Failed check(s):\n${failedChecks.join("\n")}`);
          }
        });
        // Past the deadline the probe is abandoned: its later failure is not news.
        probing.catch(() => {});
        await Promise.race([probing, deadline]);
      } catch (error) {
        clearTimeout(timer);
        await reapAll(children);
        console.error(
          `cell ${spec.id} failed with seed ${seed}: CELLS_SEED=${seed} replays its random choices`,
        );
        if (options.keepEvidence === false) {
          await Deno.remove(run.path, { recursive: true }).catch(() => {});
          report("FAIL", error instanceof Error ? error.message : String(error), figures);
          throw error;
        }
        const kept = await run.finish(false, {
          ...evidence(),
          error: error instanceof Error ? error.stack ?? error.message : String(error),
        });
        report("FAIL", error instanceof Error ? error.message : String(error), figures, kept);
        throw error;
      }
      clearTimeout(timer);
      await reapAll(children);
      const kept = await run.finish(true, evidence());
      console.log(`  ${spec.title} evidence: ${JSON.stringify(figures)}`);
      report("PASS", undefined, figures, kept);
    },
  }];
}
