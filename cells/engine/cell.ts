// The machinery every cell shares, by room: `gate.ts` decides whether a cell runs (the
// target loads, the store opens on the leg, the leg is honoured, the methods are there),
// `run.ts` runs it (run folder, context, deadline, outcome), and `outcome.ts` writes what
// it leaves (report, evidence, a FAIL's text). This file holds the types the cells code
// against and `defineCell`, which ties them together.
import type { Child, SpawnOptions } from "../../harness/child.ts";
import { currentLeg, type JournalObservation, type Leg } from "../../harness/legs.ts";
import type { RunDir } from "../../harness/evidence.ts";
import { type ChildPermissions, widenedFlags } from "../../harness/permissions.ts";
import { treeLibraries } from "../../harness/process_tree.ts";
import { targetSpecifier } from "../contract/target.ts";
import { targetAccess } from "../contract/target_access.ts";
import type { CellOptions } from "./options.ts";
import type { StoreEngine } from "./report.ts";
import { CellReporter } from "./outcome.ts";
import { gateCell } from "./gate.ts";
import { runCell } from "./run.ts";
import { engineLabel } from "./probe_store.ts";

export { CELL_DEADLINE_MS } from "./run.ts";

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

/** The last part of a target's specifier, without its extension: the default label. */
function labelOf(target: string): string {
  return target.split("/").at(-1)?.replace(/\.[jt]s$/, "") ?? target;
}

/** A cell's one test when its store cannot open (or its target load): a FAIL leading with why. */
function unopenedDefinition(
  name: string,
  reporter: CellReporter,
  message: string,
): Deno.TestDefinition {
  return {
    name,
    fn() {
      reporter.write("FAIL", { reason: message, checks: [message.split("\n")[0]!] });
      throw new Error(message);
    },
  };
}

/**
 * The host this suite was imported from, when it was imported by URL and this process
 * may reach it: the recorder's C source is fetched from there (no module imports it).
 */
function suiteHost(): string[] | false {
  const url = new URL(import.meta.url);
  if (url.protocol === "file:") return false;
  const granted = Deno.permissions.querySync({ name: "net", host: url.host }).state === "granted";
  return granted ? [url.host] : false;
}

/**
 * The permissions a cell's test narrows itself to: no network (but the suite's own host
 * when it was imported by URL), only deno as a subprocess
 * (unscoped for the LD_PRELOAD recorder), FFI only for the leg's library and what the
 * target declares, remote imports only from a remote target's host (asking for more than
 * the test process holds fails every cell).
 */
function cellPermissions(
  spec: CellSpec,
  scope: { leg: Leg; target: string; permissions: ChildPermissions | undefined },
): Deno.PermissionOptionsObject {
  const { leg, target, permissions } = scope;
  return {
    net: suiteHost(),
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
  };
}

/**
 * Builds a cell's test definitions for one target and leg. The leg is probed first (a
 * child opens the store on that leg, the libraries it mapped and its file's header say
 * what it runs on, and the on-disk mode is audited): the test's name says what the store
 * ran on; a store that cannot open FAILS with its own error; a leg the store does not
 * honour, or a store without the cell's methods, gives an ignored test whose name carries
 * the reason.
 *
 * @param spec The cell.
 * @param options Target and leg.
 * @returns The test definitions.
 */
export async function defineCell(
  spec: CellSpec,
  options: CellOptions,
): Promise<Deno.TestDefinition[]> {
  const requested = options.leg ?? currentLeg();
  const target = targetSpecifier(options.target);
  const label = options.label ?? labelOf(target);
  const gate = await gateCell(spec, { leg: requested, target, options });
  const { engine, permissions } = gate;
  // On its own SQLite, the leg's version is the store's (its messages name it), not ours.
  const leg = engine.kind === "own-sqlite" && engine.sqliteVersion
    ? { ...requested, sqliteVersion: engine.sqliteVersion }
    : requested;
  const name = `cell ${spec.id} ${spec.title} [${label} · ${leg.name} · ${engineLabel(engine)}]`;
  // What the target's children got beyond the narrow scope: named in every report.
  const widened = widenedFlags(permissions);
  const reporter = new CellReporter(spec, target, leg, engine, widened);
  if (gate.unopened) return [unopenedDefinition(name, reporter, gate.unopened)];
  if (gate.skip) {
    reporter.write("SKIP", {
      reason: gate.skip,
      ...(gate.skipKind ? { skipKind: gate.skipKind } : {}),
    });
    return [{ name: `${name} SKIP: ${gate.skip}`, ignore: true, fn: () => {} }];
  }
  return [{
    name,
    permissions: cellPermissions(spec, { leg, target, permissions }),
    sanitizeResources: false,
    sanitizeOps: false,
    fn: (t) => runCell(spec, { options, leg, target, engine, permissions, widened, reporter }, t),
  }];
}
