// The power-loss cells' integration cases as a table: each cell on the reference store must
// PASS, and each of its planted mutants must FAIL with a detail its regexp matches (the
// intended reason). A SKIP is allowed off the default leg only (no recorder there).
import { ok } from "node:assert/strict";
import { currentLeg } from "../../harness/legs.ts";
import { runDefinitions } from "../engine/run_definitions.ts";
import { mutantTarget, type TierMutantSpec } from "../testdata/mutants/catalogue.ts";
import type { PowerLossOptions } from "./record.ts";

/** A planted mutant a cell's power-loss variant must catch, and why. */
export interface CaughtMutant {
  /** The module's name in `cells/testdata/mutants/`. */
  name: string;
  /** What the failure's detail must match. */
  expect: RegExp;
  /** Options of its runs, instead of the cell's (default the cell's). */
  options?: Partial<PowerLossOptions>;
}

/** One power-loss cell's cases. */
export interface PowerLossCellCases {
  /** The cell's number. */
  cell: number;
  /** Its test definitions for a target. */
  define: (options: PowerLossOptions) => Promise<Deno.TestDefinition[]>;
  /** Options of every run (sizes, evidence). */
  options: Partial<PowerLossOptions>;
  /** Other stores than the reference that must pass, after it. */
  passing?: readonly URL[];
  /** The mutants it must catch. */
  caught: readonly CaughtMutant[];
}

/**
 * The mutants of the catalogue's power-loss list for a cell, each with its
 * `powerloss-cells` regexp.
 *
 * @param mutants The catalogue's tier mutants of the cell.
 * @param options Options of their runs, instead of the cell's.
 * @returns The cases.
 */
export function tierCaught(
  mutants: readonly TierMutantSpec[],
  options?: Partial<PowerLossOptions>,
): CaughtMutant[] {
  return mutants.flatMap((m) => {
    const expect = m.tiers["powerloss-cells"];
    return expect ? [{ name: m.name, expect, ...(options ? { options } : {}) }] : [];
  });
}

/** Runs one case and asserts its outcome. */
async function runCase(
  cells: PowerLossCellCases,
  target: URL,
  expect: "PASS" | RegExp,
  options: Partial<PowerLossOptions>,
): Promise<void> {
  const [outcome] = await runDefinitions(await cells.define({ ...options, target }));
  if (outcome?.status === "SKIP") {
    ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
    return;
  }
  if (expect === "PASS") {
    ok(outcome?.status === "PASS", outcome?.detail);
    return;
  }
  ok(outcome?.status === "FAIL", `the power-loss cell ${cells.cell} passed`);
  ok(expect.test(outcome.detail ?? ""), `caught for another reason: ${outcome.detail}`);
}

/**
 * Registers each cell's cases with `Deno.test`: the reference store passes, each mutant is
 * caught for its reason (names `power-loss cell <n> on <file>: passes|caught`).
 *
 * @param table The cells and their mutants.
 * @example
 * ```ts ignore
 * import { registerPowerLossCases } from "./_cell_cases.ts";
 * registerPowerLossCases([{ cell: 9, define: powerLossBatchCell, options: {}, caught: [] }]);
 * ```
 */
export function registerPowerLossCases(table: readonly PowerLossCellCases[]): void {
  const reference = new URL("../reference_target.ts", import.meta.url);
  for (const cells of table) {
    const cases = [
      ...[reference, ...cells.passing ?? []].map((target) => ({
        target,
        expect: "PASS" as const,
        options: cells.options,
      })),
      ...cells.caught.map((m) => ({
        target: mutantTarget(m.name),
        expect: m.expect,
        options: m.options ?? cells.options,
      })),
    ];
    for (const { target, expect, options } of cases) {
      Deno.test({
        name: `power-loss cell ${cells.cell} on ${target.pathname.split("/").at(-1)}: ${
          expect === "PASS" ? "passes" : "caught"
        }`,
        sanitizeResources: false,
        sanitizeOps: false,
        fn: () => runCase(cells, target, expect, options),
      });
    }
  }
}
