// The machinery every cell shares, by room: `gate.ts` decides whether a cell runs (the
// target loads, the store opens on the leg, the leg is honoured, the methods are there),
// `run.ts` runs it (run folder, context, deadline, outcome), and `outcome.ts` writes what
// it leaves (report, evidence, a FAIL's text). This file holds `defineCell`, which ties
// them together, and re-exports the types the cells code against (`_types.ts`).
import { HarnessError } from "../../harness/harness_error.ts";
import { currentLeg, type Leg } from "../../harness/legs.ts";
import { type ChildPermissions, widenedFlags } from "../../harness/permissions.ts";
import { treeLibraries } from "../../harness/process_tree.ts";
import { CELL_METHODS, CELL_TITLES, targetSpecifier } from "../contract/target.ts";
import { targetAccess } from "../contract/target_access.ts";
import type { CellOptions } from "./options.ts";
import { CellReporter } from "./outcome.ts";
import { gateCell } from "./gate.ts";
import { runCell } from "./run.ts";
import type { CellSpec, DefinedCell } from "./_types.ts";
import { engineLabel } from "./probe_store.ts";

export { CELL_DEADLINE_MS } from "./run.ts";
export type { CellRun, CellSpec, DefinedCell } from "./_types.ts";

/** The last part of a target's specifier, without its extension: the default label. */
function labelOf(target: string): string {
  return target.split("/").at(-1)?.replace(/\.[jt]s$/, "") ?? target;
}

/** A cell's definition with what it leaves out taken from its number: title, every leg, methods. */
function definedCell(spec: CellSpec): DefinedCell {
  return {
    ...spec,
    title: spec.title ?? CELL_TITLES[spec.id],
    legs: spec.legs ?? "all",
    requires: spec.requires ?? CELL_METHODS[spec.id],
  };
}

/**
 * A cell's one test when it cannot run: a FAIL leading with why when its store cannot open
 * (or its target load); an ERROR when the cells' children were refused a permission the
 * store needs (the sandbox's doing, never a verdict on the store).
 */
function unrunDefinition(
  name: string,
  reporter: CellReporter,
  why: { status: "FAIL" | "ERROR"; message: string },
): Deno.TestDefinition {
  const { status, message } = why;
  return {
    name,
    fn() {
      reporter.write(status, { reason: message, checks: [message.split("\n")[0]!] });
      throw status === "ERROR" ? new HarnessError(message) : new Error(message);
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
  spec: DefinedCell,
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
 * the reason. The cell's title, legs and methods default to those of its number.
 *
 * @param cell The cell.
 * @param options Target and leg.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { defineCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * // Cell 1's title, legs and methods, with a probe of its own.
 * const tests = await defineCell({ id: 1, run: async (ctx) => ctx.note("ran", true) }, { target });
 * for (const test of tests) Deno.test(test);
 * ```
 */
export async function defineCell(
  cell: CellSpec,
  options: CellOptions,
): Promise<Deno.TestDefinition[]> {
  const spec = definedCell(cell);
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
  const reporter = new CellReporter(spec, { target, leg, engine, widened });
  if (gate.refused) {
    return [unrunDefinition(name, reporter, { status: "ERROR", message: gate.refused })];
  }
  if (gate.unopened) {
    return [unrunDefinition(name, reporter, { status: "FAIL", message: gate.unopened })];
  }
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
