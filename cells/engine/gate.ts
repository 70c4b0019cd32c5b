// What decides, before a cell runs, whether it runs: the target loads, the store opens on
// the leg (the leg probe, once per target × leg × library), the leg is honoured, the store
// has the cell's methods. A store that cannot open FAILS with its own error; a leg not
// honoured or a method missing is a SKIP with the reason.
import type { Leg } from "../../harness/legs.ts";
import type { ChildPermissions } from "../../harness/permissions.ts";
import type { CellOptions } from "./options.ts";
import { DEFAULT_LEG_ONLY, type SkipKind, type StoreEngine } from "./report.ts";
import { OPEN_DEADLINE_MS, probeStore, type StoreProbe } from "./probe_store.ts";
import { declaredPermissions, missingPrograms } from "../contract/target_access.ts";
import { envMilliseconds } from "../../internal/env_ms.ts";
import { judgingDeadlineMs } from "../../internal/judging_beacon.ts";

/** What a cell's gate found. */
export interface Gate {
  /** What the store runs on (`unknown` when it did not open). */
  engine: StoreEngine;
  /** The target's `childPermissions`. */
  permissions?: ChildPermissions;
  /** Why the cell FAILS before it runs: the target did not load, the store did not open. */
  unopened?: string;
  /**
   * Why the cell is an ERROR before it runs: the cells' children were refused a permission
   * the store needs (the sandbox's doing, not the store's).
   */
  refused?: string;
  /** Why the cell is SKIPPED. */
  skip?: string;
  /** The SKIP's kind, when a reader may act on it. */
  skipKind?: SkipKind;
}

const probes = new Map<string, Promise<StoreProbe>>();

/**
 * The leg probe's open deadline: the option, else `CELLS_OPEN_DEADLINE_MS`, else 30 s.
 * Reading it here also refuses a bad `CELLS_JUDGING_DEADLINE_MS` before any cell runs.
 */
export function openDeadline(options: CellOptions): number {
  judgingDeadlineMs();
  if (options.openDeadlineMs !== undefined) return options.openDeadlineMs;
  return envMilliseconds("CELLS_OPEN_DEADLINE_MS", OPEN_DEADLINE_MS);
}

/** The leg probe, once per target × leg × library in this process. */
function probeOnce(
  leg: Leg,
  target: string,
  opening: { openDeadlineMs: number; permissions: ChildPermissions | undefined },
): Promise<StoreProbe> {
  const { openDeadlineMs, permissions } = opening;
  const key = `${target}|${leg.name}|${leg.library}`;
  let result = probes.get(key);
  if (!result) {
    result = probeStore(target, { leg, openDeadlineMs, ...(permissions ? { permissions } : {}) });
    probes.set(key, result);
  }
  return result;
}

/** What a cell needs of the store's methods that the probe did not find. */
function missingMethods(
  spec: { requires: readonly string[]; requiresOneOf?: readonly (readonly string[])[] },
  methods: readonly string[],
): string[] {
  return [
    ...spec.requires.filter((m) => !methods.includes(m)),
    ...(spec.requiresOneOf ?? []).filter((group) => !group.some((m) => methods.includes(m)))
      .map((group) => `one of ${group.join(" or ")}`),
  ];
}

/** What a cell's gate needs of the cell's definition. */
export interface GatedSpec {
  /** `default`: the cell runs on the default leg only. */
  legs: "all" | "default";
  /** Why it runs on the default leg only. */
  legReason?: string;
  /** Store methods the cell needs. */
  requires: readonly string[];
  /** Groups of methods of which the cell needs at least one each. */
  requiresOneOf?: readonly (readonly string[])[];
}

/** Where a cell's gate looks: the leg, the target, and the cell's options. */
export interface GateScope {
  /** The leg requested. */
  leg: Leg;
  /** The target's specifier. */
  target: string;
  /** The cell's options (the leg probe's open deadline). */
  options: CellOptions;
}

/**
 * Loads the target's permissions, probes the store on the leg, and decides: FAIL (the
 * target does not load, the store does not open), SKIP (a cell of the default leg only on
 * another leg, a leg not honoured, a method missing), or run.
 *
 * @example
 * ```ts ignore
 * const gate = await gateCell(spec, { leg: currentLeg(), target, options });
 * if (gate.skip) console.log(`SKIP: ${gate.skip}`);
 * ```
 */
export async function gateCell(spec: GatedSpec, scope: GateScope): Promise<Gate> {
  const { leg, target, options } = scope;
  // A target that cannot load (or declares bad permissions) fails the cell, as a store
  // that cannot open does; the tools refuse it earlier as a usage error.
  let permissions: ChildPermissions | undefined;
  let programs: string[] = [];
  try {
    permissions = await declaredPermissions(target);
    programs = await missingPrograms(target);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { engine: { kind: "unknown" }, unopened: message };
  }
  // A store whose worker program this machine lacks cannot be judged here: never a PASS.
  if (programs.length) {
    return {
      engine: { kind: "unknown", programs: [...(permissions?.run ?? [])] },
      ...(permissions ? { permissions } : {}),
      skip: `the store needs ${programs.join(", ")}, not found on this machine's PATH`,
    };
  }
  const probe = await probeOnce(leg, target, {
    openDeadlineMs: openDeadline(options),
    permissions,
  });
  // The programs its children may start (the store's workers), named in every report.
  const engine = permissions?.run?.length
    ? { ...probe.engine, programs: [...permissions.run] }
    : probe.engine;
  const gate: Gate = { engine, ...(permissions ? { permissions } : {}) };
  if (spec.legs === "default" && leg.name !== "default") {
    return {
      ...gate,
      skip: `${DEFAULT_LEG_ONLY}: ${spec.legReason ?? "by design"}`,
      skipKind: "default-leg-only",
    };
  }
  if (probe.openError?.permission) return { ...gate, refused: probe.openError.message };
  if (probe.openError) return { ...gate, unopened: probe.openError.message };
  if (probe.notHonoured) return { ...gate, skip: probe.notHonoured };
  const missing = missingMethods(spec, probe.methods);
  return missing.length ? { ...gate, skip: `the store lacks ${missing.join(", ")}` } : gate;
}
