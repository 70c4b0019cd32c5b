// What the fault clauses' integration tests share: a clause run on a named leg of this
// process's library (run the tests again with DENO_SQLITE_PATH set for the other library),
// under the recorder built once, in a folder of its own, with no child left behind.
import { ok, strictEqual } from "node:assert/strict";
import { liveChildren } from "../../harness/child.ts";
import { currentLeg, type LegName, LEGS } from "../../harness/legs.ts";
import { FAULT_MUTANTS } from "../testdata/mutants/catalogue_faults.ts";
import { isWalResetVulnerable } from "../../session_db/journal_mode.ts";
import { buildRecorder } from "../../recorder/build.ts";
import type { FaultClause, FaultVerdict } from "./types.ts";
import { testFolder } from "../../internal/_test_folder.ts";

/** Test options: the clauses' children outlive a step's resource sanitizer. */
export const ITEST = { sanitizeResources: false, sanitizeOps: false } as const;

/** The target module at `path` (from the repository's `cells/`), as a `file:` URL. */
export function cellsTarget(path: string): string {
  return new URL(`../${path}`, import.meta.url).href;
}

let recorder: Promise<{ path: string } | { skip: string }> | undefined;

/** The recorder, built once per test process (a SKIP reason where it cannot be). */
export function recorderOption(): Promise<{ path: string } | { skip: string }> {
  recorder ??= buildRecorder().then((built) =>
    built.ok ? { path: built.path } : { skip: built.reason }
  );
  return recorder;
}

/** Runs `clause` on `leg` against `target` (quick), and checks no child outlived it. */
export async function runOn(
  clause: FaultClause,
  target: string,
  leg: LegName,
): Promise<FaultVerdict> {
  const dir = testFolder({ prefix: `${clause.id}-${leg}-` });
  const verdict = await clause.run({
    target,
    leg: { ...currentLeg(), name: leg },
    seed: 7,
    quick: true,
    dir,
    recorder: await recorderOption(),
  });
  if (liveChildren().length) throw new Error(`A child of ${clause.id} outlived its run`);
  if (verdict.status === "PASS") Deno.removeSync(dir, { recursive: true });
  return verdict;
}

/** The verdict in a line, for an assertion's message. */
export function shown(verdict: FaultVerdict): string {
  return `${verdict.status}: ${(verdict.checks ?? [verdict.reason ?? ""]).join("\n")}\n${
    JSON.stringify(verdict.figures)
  }`;
}

/**
 * Whether an SQLite store cannot honour `leg` on this process's library: the reference
 * keeps the rollback journal where WAL has the reset bug, so its WAL leg is a SKIP.
 */
export function walRefused(leg: LegName): boolean {
  return leg === "wal" && isWalResetVulnerable(currentLeg().sqliteVersion);
}

/** Asserts a SKIP for a leg not honoured; returns whether it was one. */
export function skippedLeg(verdict: FaultVerdict, leg: LegName): boolean {
  if (!walRefused(leg)) return false;
  if (verdict.status !== "SKIP" || !/^leg wal not honoured/.test(verdict.reason ?? "")) {
    throw new Error(`Expected a SKIP of leg wal on this library, got ${shown(verdict)}`);
  }
  return true;
}

/**
 * Registers a test per mutant of `clause` and leg it runs on: `run` must catch it (a FAIL
 * whose checks name the mutant's check), or SKIP a leg the library does not honour.
 */
export function testCatches(
  clause: string,
  run: (target: string, leg: LegName) => Promise<FaultVerdict>,
  extra: { ignore?: boolean } = {},
): void {
  for (const mutant of FAULT_MUTANTS.filter((m) => m.clause === clause)) {
    for (const leg of mutant.legs ?? LEGS) {
      Deno.test({
        name: `${clause} catches ${mutant.name} (${mutant.breaks}), leg ${leg}`,
        ...ITEST,
        ...extra,
        async fn() {
          const verdict = await run(cellsTarget(`testdata/mutants/${mutant.name}.ts`), leg);
          if (skippedLeg(verdict, leg)) return;
          strictEqual(verdict.status, "FAIL", shown(verdict));
          ok(verdict.checks?.some((check) => mutant.check.test(check)), shown(verdict));
        },
      });
    }
  }
}
