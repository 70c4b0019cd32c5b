// The sweep's programs under injected faults can pass and can fail: the reference store
// passes a quick slice with its runs, states and second lives judged; a store that
// swallows a full disk on append, one whose handoff claim swallows a storage error (which
// F1's own program never reaches: it never claims) and one whose append waits a full disk
// out forever are each caught, by the call and the state that show it. Skipped (said out
// loud) without the recorder.
import { ok as assert } from "node:assert/strict";
import { platformSkipReason } from "../../../recorder/build.ts";
import { type FaultSweepOptions, type FaultSweepReport, sweepFaults } from "./faults.ts";
import { removedAtUnload } from "../../../internal/_test_folder.ts";

const skip = platformSkipReason();
const cells = (path: string) => new URL(`../../../cells/${path}`, import.meta.url).href;

async function run(options: Omit<FaultSweepOptions, "seed"> & { seed?: number }) {
  const report = await sweepFaults({ seed: 1, ...options });
  if ("skip" in report) throw new Error(`the recorder did not run: ${report.skip}`);
  if (report.kept) removedAtUnload(report.kept);
  return report;
}

function test(name: string, fn: () => Promise<void>) {
  Deno.test({
    name: `sweep under faults: ${name}${skip ? ` SKIP: ${skip}` : ""}`,
    ignore: skip !== undefined,
    sanitizeResources: false,
    sanitizeOps: false,
    fn,
  });
}

const lines = (report: FaultSweepReport) =>
  report.failures.map((f) => `${f.kind} ${f.program}: ${f.state}: ${f.problems.join(" / ")}`);

/** Runs a mutant and asserts that one of its failures reads as `shows`. */
async function caught(
  options: Omit<FaultSweepOptions, "seed" | "target"> & { mutant: string },
  shows: RegExp,
): Promise<void> {
  const { mutant, ...rest } = options;
  const found = lines(await run({ target: cells(`testdata/mutants/${mutant}.ts`), ...rest }));
  assert(found.some((l) => shows.test(l)), found.slice(0, 3).join("\n") || "no failure");
}

test("the reference store passes a quick slice, every state and second life judged", async () => {
  const report = await run({ target: cells("reference_target.ts"), quick: true });
  assert(!report.failures.length, lines(report).slice(0, 3).join("\n"));
  assert(report.programs >= 10, `only ${report.programs} programs`);
  assert(report.runs >= report.programs, `only ${report.runs} faulted runs`);
  assert(report.states > report.runs, `${report.states} states for ${report.runs} runs`);
  assert(report.resumes.run > 0, "no second life was judged");
  for (const kind of ["write ENOSPC", "fsync EIO", "read EIO", "short write"]) {
    assert(Object.keys(report.figures).some((k) => k.startsWith(kind)), `no ${kind} run`);
  }
});

test("an append that swallows a full disk is caught where its acknowledgement is lost", () =>
  caught(
    { mutant: "swallows_enospc", programs: ["append"] },
    /^state append: write ENOSPC \(the disk stays full\) at call \d+ \(#\d+ write .*\(injected\)\), the files left: durability: acknowledged operation 0 \(append\) lost/,
  ));

test("a claim that swallows a storage error is caught (F1's own program never claims)", () =>
  caught(
    { mutant: "claim_swallows_storage_error", programs: ["claim"] },
    /^state claim: .* at call \d+ .*: durability: acknowledged operation 0 \(claim\) lost/,
  ));

test("an append that waits a full disk out is a hang, named with its operation", () =>
  caught(
    {
      mutant: "append_retries_storage_error",
      programs: ["append"],
      quick: true,
      deadlineMs: 3_000,
    },
    /^run append: write ENOSPC \(the disk stays full\) at call \d+ \(#\d+ write .*\(injected\)\), the faulted process: the store hung for 3 s in append after the fault/,
  ));
