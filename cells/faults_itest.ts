// A crashing child fails its cell at once, with its stderr in the message.
import { ok, strictEqual } from "node:assert/strict";
import { consumeOnceCell } from "./consume_once/cell.ts";
import { prefixDurabilityCell } from "./prefix_durability/cell.ts";
import { runDefinitions } from "./engine/run_definitions.ts";
import { liveChildren } from "../harness/child.ts";
import { DatabaseSync } from "node:sqlite";
import { currentLeg } from "../harness/legs.ts";

const faulty = (name: string) => new URL(`./testdata/faulty/${name}.ts`, import.meta.url);
const options = { sanitizeResources: false, sanitizeOps: false };
// The default leg, which every SQLite honours: each case is judged, never skipped.
const leg = { ...currentLeg(), name: "default" as const };

Deno.test({
  name: "a claimant that throws (exit 1) fails cell 2 with its stderr",
  ...options,
  async fn() {
    const [outcome] = await runDefinitions(
      await consumeOnceCell({ target: faulty("claim_throws"), keepEvidence: false, leg }),
    );
    strictEqual(outcome?.status, "FAIL");
    ok(outcome.detail?.includes("crashed (neither won nor lost)"), outcome.detail);
    ok(outcome.detail?.includes("exited with code 1"), outcome.detail);
    ok(outcome.detail?.includes("claimant exploded"), "the claimant's stderr is missing");
    strictEqual(liveChildren().length, 0, "a child outlived its test");
  },
});

Deno.test({
  name: "a writer that dies before the kill window fails cell 1 at once with its stderr",
  ...options,
  async fn() {
    const started = performance.now();
    const [outcome] = await runDefinitions(
      await prefixDurabilityCell({ target: faulty("writer_dies"), keepEvidence: false, leg }),
    );
    strictEqual(outcome?.status, "FAIL");
    ok(outcome.detail?.includes("writer died: the disk is on fire"), outcome.detail);
    ok(outcome.detail?.includes("Gave up waiting for 200 acknowledged appends"), outcome.detail);
    ok(
      performance.now() - started < 20_000,
      "it waited for the deadline instead of failing at once",
    );
    strictEqual(liveChildren().length, 0, "a child outlived its test");
  },
});

Deno.test({
  name: "a writer that floods stderr fails cell 1 at once with a bounded tail of it",
  ...options,
  async fn() {
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
    strictEqual(liveChildren().length, 0, "a child outlived its test");
  },
});

// The three cases that wait out a deadline run side by side, so the suite waits once.
// The deadlines leave a child time to start on a loaded machine (its stderr must be in
// the message); the children hang for 60 s, so failing long before is the deadline.
Deno.test({
  name: "hanging children fail their cells at the deadline with their stderr, and are killed",
  ...options,
  async fn() {
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
        overallDeadlineMs: 2500,
      })),
      // The overall deadline ends a cell whose own wait is far longer.
      timed(prefixDurabilityCell({
        target: faulty("writer_hangs"),
        keepEvidence: false,
        leg,
        deadlineMs: 60_000,
        overallDeadlineMs: 2500,
      })),
    ]);
    const detail = (o: typeof hangs) => o.outcome?.detail ?? "";

    strictEqual(hangs.outcome?.status, "FAIL", "hanging writer");
    ok(detail(hangs).includes("Gave up waiting for 200 acknowledged appends"), detail(hangs));
    ok(detail(hangs).includes("last observed: 3 acknowledged this round"), detail(hangs));
    ok(detail(hangs).includes("still running"), detail(hangs));
    ok(detail(hangs).includes("writer stuck: the disk stopped answering"), detail(hangs));
    ok(hangs.elapsed < 20_000, `hanging writer: ${Math.round(hangs.elapsed)} ms`);

    strictEqual(barrier.outcome?.status, "FAIL", "claimants stuck before the barrier");
    ok(
      detail(barrier).includes("did not finish within its overall deadline of 2500 ms"),
      detail(barrier),
    );
    // Two claimants and the child writing beside their race.
    ok(detail(barrier).includes("3 child(ren) still running"), detail(barrier));
    ok(detail(barrier).includes("stuck before the barrier"), detail(barrier));
    ok(barrier.elapsed < 20_000, `stuck claimants: ${Math.round(barrier.elapsed)} ms`);

    strictEqual(overall.outcome?.status, "FAIL", "overall deadline");
    ok(
      detail(overall).includes("did not finish within its overall deadline of 2500 ms"),
      detail(overall),
    );
    ok(detail(overall).includes("writer stuck: the disk stopped answering"), detail(overall));
    ok(overall.elapsed < 20_000, `overall deadline: ${Math.round(overall.elapsed)} ms`);

    strictEqual(liveChildren().length, 0, "a child outlived its test");
  },
});

Deno.test({
  name: "a store whose openStore never returns fails within the open deadline, named",
  ...options,
  async fn() {
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
    strictEqual(outcome?.status, "FAIL");
    ok(outcome.detail?.startsWith("Gave up waiting for the store of "), outcome.detail);
    ok(outcome.detail?.includes("open_hangs.ts to open"), outcome.detail);
    ok(outcome.detail?.includes("still running after 2500 ms"), outcome.detail);
    ok(outcome.detail?.includes("open deadline 2500 ms"), outcome.detail);
    ok(outcome.detail?.includes("open hangs: waiting for a lock"), "the child's stderr is missing");
    ok(elapsed < 20_000, `it took ${Math.round(elapsed)} ms`);
    strictEqual(liveChildren().length, 0, "a child outlived its test");
  },
});

Deno.test({
  name: "a store whose openStore throws fails every cell at once, leading with its own error",
  ...options,
  async fn() {
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
    strictEqual(liveChildren().length, 0, "a child outlived its test");
  },
});

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
    await Deno.remove(outcome.evidence!, { recursive: true });
    const db = new DatabaseSync(":memory:");
    const version = String(db.prepare("SELECT sqlite_version() AS v").get()!.v);
    db.close();
    strictEqual(evidence.engine?.kind, "own-sqlite", JSON.stringify(evidence.engine));
    strictEqual(evidence.sqliteVersion, version);
    strictEqual(evidence.library, undefined, `it names ${evidence.library}`);
    ok(!JSON.stringify(evidence).includes(leg.library), "the leg's library is named");
  },
});
