// What the F3 and F4 integration tests share: a clause run under the built recorder on a
// named leg of this process's library (run the tests again with DENO_SQLITE_PATH set for
// the other library), in a folder of its own.
import { buildRecorder } from "../../recorder/build.ts";
import { currentLeg, type LegName } from "../../harness/legs.ts";
import type { FaultClause, FaultVerdict } from "./_types.ts";

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

/** Runs `clause` on `leg` against `target` (quick) under the recorder. */
export async function runHazardClause(
  clause: FaultClause,
  target: string,
  leg: LegName,
): Promise<FaultVerdict> {
  const dir = Deno.makeTempDirSync({ prefix: `${clause.id}-${leg}-` });
  const verdict = await clause.run({
    target,
    leg: { ...currentLeg(), name: leg },
    seed: 7,
    quick: true,
    dir,
    recorder: await recorderOption(),
  });
  if (verdict.status === "PASS") Deno.removeSync(dir, { recursive: true });
  return verdict;
}

/** The verdict in a line, for an assertion's message. */
export function shown(verdict: FaultVerdict): string {
  return `${verdict.status}: ${(verdict.checks ?? [verdict.reason ?? ""]).join("\n")}\n${
    JSON.stringify(verdict.figures)
  }`;
}
