// A crashing child fails its cell at once, with its stderr in the message.
import { ok, strictEqual } from "node:assert/strict";
import { consumeOnceCell } from "./consume_once.ts";
import { prefixDurabilityCell } from "./prefix_durability.ts";
import { runDefinitions } from "./_run.ts";
import { liveChildren } from "../harness/child.ts";

const faulty = (name: string) => new URL(`./testdata/faulty/${name}.ts`, import.meta.url);
const options = { sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name: "a claimant that throws (exit 1) fails cell 2 with its stderr",
  ...options,
  async fn() {
    const [outcome] = await runDefinitions(
      await consumeOnceCell({ target: faulty("claim_throws"), keepEvidence: false }),
    );
    if (outcome?.status === "SKIP") return; // not the default leg
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
      await prefixDurabilityCell({ target: faulty("writer_dies"), keepEvidence: false }),
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
