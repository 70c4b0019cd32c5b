// A crashing child fails its cell at once, with its stderr in the message.
import { ok, strictEqual } from "node:assert/strict";
import { consumeOnceCell } from "./consume_once/cell.ts";
import { prefixDurabilityCell } from "./prefix_durability/cell.ts";
import { type DefinitionOutcome, runDefinitions } from "./engine/run_definitions.ts";
import { liveChildren } from "../harness/child.ts";
import { DatabaseSync } from "node:sqlite";
import { currentLeg } from "../harness/legs.ts";
import { removedAtUnload } from "../internal/_test_folder.ts";

const faulty = (name: string) => new URL(`./testdata/faulty/${name}.ts`, import.meta.url);
const options = { sanitizeResources: false, sanitizeOps: false };
// The default leg, which every SQLite honours: each case is judged, never skipped.
const leg = { ...currentLeg(), name: "default" as const };

/** A test of faulty targets: `body`, then no child of theirs may be left running. */
function faultTest(name: string, body: () => Promise<void>): void {
  Deno.test({
    name,
    ...options,
    async fn() {
      await body();
      strictEqual(liveChildren().length, 0, "a child outlived its test");
    },
  });
}

/** Asserts a FAIL whose detail names every one of `phrases`. */
function failedNaming(outcome: DefinitionOutcome | undefined, phrases: readonly string[]) {
  strictEqual(outcome?.status, "FAIL");
  for (const phrase of phrases) ok(outcome.detail?.includes(phrase), outcome.detail);
}

faultTest("a claimant that throws (exit 1) fails cell 2 with its stderr", async () => {
  const [outcome] = await runDefinitions(
    await consumeOnceCell({ target: faulty("claim_throws"), keepEvidence: false, leg }),
  );
  failedNaming(outcome, ["crashed (neither won nor lost)", "exited with code 1"]);
  ok(outcome!.detail?.includes("claimant exploded"), "the claimant's stderr is missing");
});

faultTest(
  "a writer that dies before the kill window fails cell 1 at once with its stderr",
  async () => {
    const started = performance.now();
    const [outcome] = await runDefinitions(
      await prefixDurabilityCell({ target: faulty("writer_dies"), keepEvidence: false, leg }),
    );
    failedNaming(outcome, [
      "writer died: the disk is on fire",
      "Gave up waiting for 200 acknowledged appends",
    ]);
    ok(
      performance.now() - started < 20_000,
      "it waited for the deadline instead of failing at once",
    );
  },
);

faultTest(
  "a writer that floods stderr fails cell 1 at once with a bounded tail of it",
  async () => {
    const definitions = await prefixDurabilityCell({
      target: faulty("writer_floods"),
      keepEvidence: false,
      leg,
    });
    const started = performance.now();
    const [outcome] = await runDefinitions(definitions);
    strictEqual(outcome?.status, "FAIL");
    ok(outcome.detail?.includes("writer flooded: the end of the flood"), "the tail is missing");
    ok(/\[\d+ bytes cut\]/.test(outcome.detail ?? ""), "the flood was not cut");
    // 8 MiB went out; the message keeps at most the 64 KiB tail plus its own words.
    ok(outcome.detail!.length < 70_000, `the message is ${outcome.detail!.length} characters`);
    ok(performance.now() - started < 20_000, "it waited for the deadline instead");
  },
);

// The three cases that wait out a deadline run side by side, so the suite waits once.
// The deadlines leave a child time to start on a loaded machine (its stderr must be in
// the message); the children hang for 60 s, so failing long before is the deadline.
faultTest(
  "hanging children fail their cells at the deadline with their stderr, and are killed",
  async () => {
    const timed = async (definitions: Promise<Deno.TestDefinition[]>) => {
      const ready = await definitions;
      const started = performance.now();
      const [outcome] = await runDefinitions(ready);
      return { outcome, elapsed: performance.now() - started };
    };
    const [hangs, barrier, overall] = await Promise.all([
      // A writer that hangs before the kill window: cell 1's own wait gives up.
      timed(prefixDurabilityCell({
        target: faulty("writer_hangs"),
        keepEvidence: false,
        leg,
        deadlineMs: 2500,
      })),
      // Claimants that never reach the barrier: the overall deadline ends cell 2.
      timed(consumeOnceCell({
        target: faulty("claimant_hangs"),
        keepEvidence: false,
        leg,
        claimants: 2,
        overallDeadlineMs: 6000,
      })),
      // The overall deadline ends a cell whose own wait is far longer.
      timed(prefixDurabilityCell({
        target: faulty("writer_hangs"),
        keepEvidence: false,
        leg,
        deadlineMs: 60_000,
        overallDeadlineMs: 6000,
      })),
    ]);
    // Each FAILed, its detail names each phrase, and it ended long before its children would.
    const failedFast = (run: typeof hangs, names: [string, string], phrases: string[]) => {
      const detail = run.outcome?.detail ?? "";
      strictEqual(run.outcome?.status, "FAIL", names[0]);
      for (const phrase of phrases) ok(detail.includes(phrase), detail);
      ok(run.elapsed < 20_000, `${names[1]}: ${Math.round(run.elapsed)} ms`);
    };
    const overran = "did not finish within its overall deadline of 6000 ms (nothing moved";
    failedFast(hangs, ["hanging writer", "hanging writer"], [
      "Gave up waiting for 200 acknowledged appends",
      "last observed: 3 acknowledged this round",
      "still running",
      "writer stuck: the disk stopped answering",
    ]);
    // Two claimants and the child writing beside their race.
    failedFast(barrier, ["claimants stuck before the barrier", "stuck claimants"], [
      overran,
      "3 child(ren) still running",
      "stuck before the barrier",
    ]);
    failedFast(overall, ["overall deadline", "overall deadline"], [
      overran,
      "writer stuck: the disk stopped answering",
    ]);
  },
);

/** Cell 1 on the slow store (every call answered 40 ms late), waiting 2 s at most for an ack. */
async function slowCell1(
  options: { minAcknowledged: number; rounds: number; overallDeadlineMs?: number },
): Promise<DefinitionOutcome | undefined> {
  const [outcome] = await runDefinitions(
    await prefixDurabilityCell({
      target: new URL("./testdata/slow_target.ts", import.meta.url),
      keepEvidence: false,
      leg,
      deadlineMs: 2_000,
      killSeries: "off",
      ...options,
    }),
  );
  return outcome;
}

// A correct store a network away answers each call late; while it keeps acknowledging, a
// wait is not stalled, however far past its deadline (here 2 s for 60 appends of 40 ms).
faultTest("a slow store that keeps acknowledging is waited for, and passes cell 1", async () => {
  const outcome = await slowCell1({ minAcknowledged: 60, rounds: 2 });
  strictEqual(outcome?.status, "PASS", outcome?.detail);
});

// A store so slow that a cell outlasts its overall deadline while still acknowledging is
// not judged (an ERROR): only a run that stopped moving is a FAIL.
faultTest("a slow store still acknowledging at a cell's overall deadline is an ERROR", async () => {
  const outcome = await slowCell1({
    minAcknowledged: 100_000,
    rounds: 1,
    overallDeadlineMs: 6_000,
  });
  strictEqual(outcome?.status, "ERROR", outcome?.detail);
  for (const phrase of ["overall deadline of 6000 ms though it kept moving", "not judged"]) {
    ok(outcome.detail?.includes(phrase), outcome.detail);
  }
});

faultTest(
  "a store whose openStore never returns fails within the open deadline, named",
  async () => {
    const started = performance.now();
    const [outcome] = await runDefinitions(
      await prefixDurabilityCell({
        target: faulty("open_hangs"),
        keepEvidence: false,
        leg,
        openDeadlineMs: 2500,
      }),
    );
    const elapsed = performance.now() - started;
    failedNaming(outcome, [
      "open_hangs.ts to open",
      "still running after 2500 ms",
      "open deadline 2500 ms",
    ]);
    ok(outcome!.detail?.startsWith("Gave up waiting for the store of "), outcome!.detail);
    ok(
      outcome!.detail?.includes("open hangs: waiting for a lock"),
      "the child's stderr is missing",
    );
    ok(elapsed < 20_000, `it took ${Math.round(elapsed)} ms`);
  },
);

faultTest(
  "a store whose openStore throws fails every cell at once, leading with its own error",
  async () => {
    for (const cell of [prefixDurabilityCell, consumeOnceCell]) {
      const started = performance.now();
      const [outcome] = await runDefinitions(
        await cell({ target: faulty("open_throws"), keepEvidence: false, leg }),
      );
      const elapsed = performance.now() - started;
      strictEqual(outcome?.status, "FAIL", "a store that cannot open must fail");
      ok(
        outcome.detail?.startsWith("openStore threw: Error: Cannot open session database"),
        outcome.detail,
      );
      ok(outcome.detail?.includes("exited with code 12 after"), outcome.detail);
      ok(!/deadline|Gave up/.test(outcome.detail ?? ""), `deadline advice: ${outcome.detail}`);
      ok(elapsed < 20_000, `it took ${Math.round(elapsed)} ms`);
    }
    const [exits] = await runDefinitions(
      await prefixDurabilityCell({ target: faulty("open_exits"), keepEvidence: false, leg }),
    );
    strictEqual(exits?.status, "FAIL");
    ok(exits.detail?.includes("the probe child exited with code 1 after"), exits.detail);
    ok(exits.detail?.includes("is not mine, giving up"), exits.detail);
    ok(!/deadline/.test(exits.detail ?? ""), exits.detail);
  },
);

Deno.test({
  name:
    "the evidence of a store on its own SQLite names that SQLite, never a library it did not load",
  ...options,
  async fn() {
    const [outcome] = await runDefinitions(
      await prefixDurabilityCell({ target: faulty("own_sqlite_writer_dies"), leg }),
    );
    strictEqual(outcome?.status, "FAIL");
    ok(outcome.evidence, "no evidence kept");
    const evidence = JSON.parse(Deno.readTextFileSync(`${outcome.evidence}/evidence.json`));
    removedAtUnload(outcome.evidence!);
    const db = new DatabaseSync(":memory:");
    const version = String(db.prepare("SELECT sqlite_version() AS v").get()!.v);
    db.close();
    strictEqual(evidence.engine?.kind, "own-sqlite", JSON.stringify(evidence.engine));
    strictEqual(evidence.sqliteVersion, version);
    strictEqual(evidence.library, undefined, `it names ${evidence.library}`);
    ok(!JSON.stringify(evidence).includes(leg.library), "the leg's library is named");
  },
});
