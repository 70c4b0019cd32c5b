/**
 * Conformance levels from results (docs/conformance.md#levels). Only a PASS (or an
 * XPASS: it passed) counts; a SKIP never does, an XFAIL is a failure that was expected,
 * and an ERROR (the suite failed) is no evidence either way.
 *
 * @example
 * ```ts
 * import { levelOf } from "./levels.ts";
 * console.log(levelOf([], []).level); // "NONE"
 * ```
 *
 * @module
 */
import { CELLS } from "../cells/register.ts";
import type { Level, Result, TierName, TierRun } from "./report_schema.ts";
import { LEVELS } from "./report_schema.ts";
import { legFound } from "./_twin_legs.ts";

const passed = (r: Result) => r.status === "PASS" || r.status === "XPASS";
const failed = (r: Result) => r.status === "FAIL" || r.status === "XFAIL" || r.status === "ERROR";
const where = (r: Result) =>
  `${r.tier} ${r.leg} × ${r.library}${r.machine ? ` on ${r.machine}` : ""}`;
const POWER_LOSS: readonly TierName[] = ["syscalls-power-loss", "powerloss-cells"];
const SIGKILL: readonly TierName[] = ["cells", "syscalls-crash"];

/**
 * A store written elsewhere declares no crash points: its kills land at its file-system
 * calls instead (the `syscalls-crash` tier, and the cells' kill series inside operations),
 * so the sweep of named points skipped for that reason stands in for no gap once that
 * tier ran on the same machine.
 */
function standsIn(t: TierRun & { machine?: string }, tiers: readonly TierRun[]): boolean {
  return t.tier === "sweep" && t.skipKind === "no-crash-points" &&
    tiers.some((o: TierRun & { machine?: string }) =>
      o.tier === "syscalls-crash" && o.status === "RAN" && o.machine === t.machine
    );
}

/**
 * A level and, below FULL, the next one with what it lacks.
 *
 * @example
 * ```ts
 * import type { LevelVerdict } from "./levels.ts";
 * const base: LevelVerdict = { level: "BASE", next: { level: "DURABLE", missing: ["no power-loss tier passed"] } };
 * ```
 */
export interface LevelVerdict {
  /** The level reached. */
  level: Level;
  /** The next level and what it lacks. */
  next?: { level: Level; missing: string[] };
}

/**
 * The honoured legs: leg × library (× machine) where the cells tier ran cell 1 (it needs
 * only the core methods, so it runs wherever the store honours the leg).
 *
 * @example
 * ```ts
 * import { honouredLegs } from "./levels.ts";
 * console.log(honouredLegs([]).length); // 0
 * ```
 */
export function honouredLegs(results: readonly Result[]): Result[] {
  return results.filter((r) => r.tier === "cells" && r.cell === 1 && r.observed !== "SKIP");
}

/** What BASE lacks: cell 1 passing under SIGKILL on every honoured leg, nothing failing it. */
function baseMissing(results: readonly Result[]): string[] {
  const honoured = honouredLegs(results);
  const missing: string[] = [];
  if (!honoured.length) {
    const skips = results.filter((r) => r.tier === "cells" && r.cell === 1);
    missing.push(
      `cell 1 (prefix durability) ran on no leg${
        skips.length ? `: ${skips.map((r) => `${where(r)} SKIP (${r.reason ?? "?"})`)[0]}` : ""
      }`,
    );
  }
  for (const r of honoured) {
    if (!passed(r)) missing.push(`cell 1 on ${where(r)}: ${r.status}`);
  }
  for (const r of results) {
    if (r.cell === 1 && r.tier !== "cells" && SIGKILL.includes(r.tier) && failed(r)) {
      missing.push(`cell 1's clause on ${where(r)}: ${r.status}`);
    }
  }
  return missing;
}

/** What DURABLE adds: acknowledged appends survive a power loss on some tier, none lost. */
function durableMissing(results: readonly Result[]): string[] {
  const loss = results.filter((r) => POWER_LOSS.includes(r.tier) && (r.cell ?? 1) === 1);
  const missing = loss.filter(failed).map((r) => `power loss on ${where(r)}: ${r.status}`);
  if (!loss.some(passed)) {
    missing.push(
      "no power-loss tier passed cell 1's clause (both power-loss tiers need the file-system call recorder: Linux/glibc with cc)",
    );
  }
  return missing;
}

/**
 * Whether a twin of `leg` (an honoured leg of the same machine, on any library, that ran in
 * the very mode) judged cell `id` itself.
 */
function judgedBy(results: readonly Result[]): (leg: Result, id: number) => boolean {
  const honoured = honouredLegs(results);
  return (leg, id) => {
    const mode = legFound(leg).mode;
    if (mode === undefined) return false;
    return honoured.some((twin) =>
      twin !== leg && twin.machine === leg.machine && legFound(twin).mode === mode &&
      results.some((x) =>
        x.tier === "cells" && x.cell === id && x.leg === twin.leg &&
        x.library === twin.library && x.machine === twin.machine &&
        x.skipKind !== "judged-on-twin"
      )
    );
  };
}

/**
 * What FULL adds: every cell passes on every honoured leg (a cell that holds on the
 * default leg only, by design, passes there instead; a cell `--quick` left to a twin, a leg
 * of the same mode, passes there), every tier ran, nothing failed (nothing
 * left running either).
 */
function fullMissing(results: readonly Result[], tiers: readonly TierRun[]): string[] {
  const missing: string[] = [];
  const judgedOnTwin = judgedBy(results);
  for (const leg of honouredLegs(results)) {
    for (const id of Object.keys(CELLS).map(Number)) {
      const on = (name: string) =>
        results.find((x) =>
          x.tier === "cells" && x.cell === id && x.leg === name && x.library === leg.library &&
          x.machine === leg.machine
        );
      let r = on(leg.leg);
      if (
        r && leg.leg !== "default" && r.observed === "SKIP" && r.skipKind === "default-leg-only"
      ) {
        const atDefault = on("default");
        if (atDefault && passed(atDefault)) continue;
        r = atDefault;
      }
      // Under --quick a cell may be left to its twin (the leg asked for by name of the
      // default's mode, the same leg on an earlier library): it must pass there, and what the
      // twin said instead is the gap, named once, on the twin's own leg.
      if (r && r.observed === "SKIP" && r.skipKind === "judged-on-twin" && judgedOnTwin(leg, id)) {
        continue;
      }
      if (!r || !passed(r)) {
        missing.push(
          `cell ${id} on ${where(leg)}: ${
            r ? `${r.status}${r.reason ? ` (${r.reason})` : ""}` : "not run"
          }`,
        );
      }
    }
  }
  for (const t of tiers) {
    if (t.tier === "faults") continue; // HARDENED's
    if (t.status === "SKIP" && !standsIn(t, tiers)) {
      missing.push(`tier ${t.tier}: SKIP (${t.reason ?? "?"})`);
    }
  }
  // A failure of no cell's clause (a process left running, a broken test run) too.
  for (const r of results) {
    if (r.tier === "faults") continue; // HARDENED's
    if ((r.tier !== "cells" || r.cell === undefined) && failed(r)) {
      missing.push(`${r.clause} on ${where(r)}: ${r.status}`);
    }
  }
  return missing;
}

/**
 * What HARDENED adds: the fault tier ran on every library (and machine) with an honoured
 * leg not left to a twin, and every fault clause passed on each leg it ran on (under
 * `--quick` the later tiers run once per on-disk mode, so a leg may be left out; a leg with
 * any fault row must have them all). An expected failure, XFAIL, is still a failure; a SKIP
 * is no evidence.
 */
function hardenedMissing(results: readonly Result[], tiers: readonly TierRun[]): string[] {
  const run = tiers.find((t) => t.tier === "faults");
  if (!run || run.status === "SKIP") {
    return [`tier faults: ${run ? `SKIP (${run.reason ?? "?"})` : "not run"}`];
  }
  const missing: string[] = [];
  const faults = results.filter((r) => r.tier === "faults");
  const clauses = [...new Set(faults.map((r) => r.clause))];
  // A library whose every honoured leg `--quick` left to a twin was judged on the twin's.
  const leftToTwin = (leg: Result) =>
    results.some((x) =>
      x.tier === "cells" && x.leg === leg.leg && x.library === leg.library &&
      x.machine === leg.machine && x.skipKind === "judged-on-twin"
    );
  const places = new Map<string, Result>();
  for (const leg of honouredLegs(results)) {
    if (!leftToTwin(leg)) places.set(`${leg.library}|${leg.machine}`, leg);
  }
  for (const place of places.values()) {
    const rows = faults.filter((r) => r.library === place.library && r.machine === place.machine);
    const on = `${place.library}${place.machine ? ` on ${place.machine}` : ""}`;
    if (!rows.length) missing.push(`the fault clauses on ${on}: not run`);
    for (const leg of new Set(rows.map((r) => r.leg))) {
      for (const clause of clauses) {
        const r = rows.find((x) => x.leg === leg && x.clause === clause);
        if (!r) missing.push(`${clause} on faults ${leg} × ${on}: not run`);
        else if (!passed(r)) {
          missing.push(`${clause} on ${where(r)}: ${r.status}${r.reason ? ` (${r.reason})` : ""}`);
        }
      }
    }
  }
  return missing;
}

/**
 * The level the results reach (docs/conformance.md#levels):
 *
 * - BASE: cell 1 ran on some leg and passed on every leg the store honours, under
 *   SIGKILL, and no SIGKILL tier failed its clause;
 * - DURABLE: BASE, and cell 1's clause passed on a power-loss tier with none failing;
 * - FULL: DURABLE, every cell passed on every honoured leg, every tier but the fault tier
 *   ran (no tier SKIPPED) and no result of them failed;
 * - HARDENED: FULL, and every fault clause (injected errors, corruption, lock hazards,
 *   pulled files, short-lived processes) passed on every honoured leg;
 * - NONE otherwise.
 *
 * @param results Every result (of one machine, or merged: every machine must reach it).
 * @param tiers How the tiers went.
 * @returns The level, and what the next one lacks.
 * @example
 * ```ts
 * import { levelOf } from "./levels.ts";
 * const { level, next } = levelOf([], [{ tier: "cells", status: "RAN", seconds: 1 }]);
 * console.log(level, next?.missing[0]); // "NONE" "cell 1 (prefix durability) ran on no leg"
 * ```
 */
export function levelOf(results: readonly Result[], tiers: readonly TierRun[]): LevelVerdict {
  const checks: [Level, string[]][] = [
    ["BASE", baseMissing(results)],
    ["DURABLE", durableMissing(results)],
    ["FULL", fullMissing(results, tiers)],
    ["HARDENED", hardenedMissing(results, tiers)],
  ];
  let level: Level = "NONE";
  for (const [name, missing] of checks) {
    if (missing.length) return { level, next: { level: name, missing } };
    level = name;
  }
  return { level };
}

/**
 * The weaker of two levels.
 *
 * @example
 * ```ts
 * import { weakest } from "./levels.ts";
 * console.log(weakest("FULL", "BASE")); // "BASE"
 * ```
 */
export function weakest(a: Level, b: Level): Level {
  return LEVELS.indexOf(a) <= LEVELS.indexOf(b) ? a : b;
}
