// The pieces of cell 6 that need no processes: the real-time order check, the
// unfinished-work check, the SVG plots; and the WAL bound and the busy window, which must be
// able to fail.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { currentLeg } from "../../harness/legs.ts";
import { realTimeViolations, type TimedAppend, unfinished } from "./role_journal.ts";
import { cdf, lineChart } from "./svg.ts";
import { concurrentWritersCell, type ConcurrentWritersOptions } from "./cell.ts";
import { type DefinitionOutcome, runDefinitions } from "../engine/run_definitions.ts";

const append = (role: string, seq: number, id: number, t0: number, t1: number): TimedAppend => ({
  role,
  seq,
  session: "s",
  content: `${role}:${seq}`,
  id,
  t0,
  t1,
});

Deno.test("real-time order: an append acknowledged before another was invoked has the smaller id", () => {
  deepStrictEqual(realTimeViolations([append("a", 0, 1, 0, 5), append("b", 0, 2, 6, 9)]), []);
  const [violation] = realTimeViolations([append("a", 0, 2, 0, 5), append("b", 0, 1, 6, 9)]);
  ok(violation?.startsWith("a #0 (id 2) was acknowledged at 5 before b #0 (id 1)"), violation);
});

Deno.test("real-time order: overlapping or same-millisecond appends may commit either way", () => {
  // b was invoked in the millisecond a was acknowledged: the order is not certain.
  deepStrictEqual(realTimeViolations([append("a", 0, 2, 0, 5), append("b", 0, 1, 5, 9)]), []);
  deepStrictEqual(realTimeViolations([append("a", 0, 2, 0, 8), append("b", 0, 1, 3, 9)]), []);
});

Deno.test("unfinished: what a role neither settled nor lost to a kill", () => {
  const entries = [
    { k: "ack" as const, seq: 0 },
    { k: "refused" as const, seq: 1 },
    { k: "inv" as const, seq: 2 },
  ];
  deepStrictEqual(unfinished(entries, 4, new Set([2])), [3]);
  deepStrictEqual(unfinished(entries, 2, new Set()), []);
});

Deno.test("the SVG plots are standalone documents with one path per series", () => {
  const svg = lineChart({
    title: "a <title> & more",
    xLabel: "x",
    yLabel: "y",
    series: [{ name: "one", points: [[0, 0], [1, 2]] }, { name: "two", points: cdf([3, 1, 2]) }],
  });
  ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  ok(svg.includes("a &lt;title&gt; &amp; more"));
  strictEqual(svg.match(/<path /g)?.length, 2);
  deepStrictEqual(cdf([3, 1, 2]), [[1, 1 / 3], [2, 2 / 3], [3, 1], [3, 1]]);
});

/**
 * A short cell 6 (no kills) on the target at `path`, with `options`: its outcome, or
 * `skipped` (printed) off the default leg.
 */
async function shortRun(
  path: string,
  options: Partial<ConcurrentWritersOptions>,
): Promise<DefinitionOutcome | undefined | "skipped"> {
  const definitions = await concurrentWritersCell({
    target: new URL(path, import.meta.url),
    span: 0.4,
    kills: 0,
    ...options,
    keepEvidence: false,
  });
  const [outcome] = await runDefinitions(definitions);
  if (outcome?.status !== "SKIP") return outcome;
  ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
  console.log(`  SKIP: ${outcome.detail}`);
  return "skipped";
}

Deno.test({
  name: "cell 6 fails when the WAL grows past the bound the user set",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const outcome = await shortRun("../reference_target.ts", { walBoundBytes: 0 });
    if (outcome === "skipped") return;
    if (outcome?.status === "PASS") {
      // Only a file that never had a WAL stays within a bound of 0 bytes.
      ok(currentLeg().name !== "wal", "the WAL leg passed a WAL bound of 0 bytes");
      await t.step("no WAL on this leg: the bound held trivially", () => {});
      return;
    }
    ok(
      /^WAL stays under 0 bytes: the WAL grew to \d+ bytes/.test(outcome?.detail ?? ""),
      outcome?.detail,
    );
    console.log(`  caught (${currentLeg().name} leg): ${outcome?.detail}`);
  },
});

Deno.test({
  name: "cell 6's busy window alone makes a store that swallows SQLITE_BUSY lose appends",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // No periodic holds and no kills: only the window stands between the mutant and a PASS.
    const outcome = await shortRun("../testdata/mutants/append_swallows_busy.ts", {
      lockHoldMs: 0,
    });
    if (outcome === "skipped") return;
    ok(
      /^every acknowledged operation survives: \d+ acknowledged: \d+ acknowledged append\(s\) lost/
        .test(outcome?.detail ?? ""),
      `${outcome?.status}: ${outcome?.detail}`,
    );
  },
});

Deno.test({
  name: "cell 6 fails a store that lets one process write and refuses every other's writes",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // Each refusal is typed and late enough and nothing is lost: what is wrong is that a
    // role never wrote, so nothing of it was judged.
    const outcome = await shortRun("../testdata/first_writer_only_target.ts", {
      lockHoldMs: 0,
      minBusyWaitMs: 100,
    });
    if (outcome === "skipped") return;
    ok(
      /^every role wrote: each had operations acknowledged, not only refused: .*no operation acknowledged/
        .test(outcome?.detail ?? ""),
      `${outcome?.status}: ${outcome?.detail}`,
    );
  },
});
