import { ok, strictEqual } from "node:assert/strict";
import { besideStore, RunDir } from "./evidence.ts";

Deno.test("each store of a run gets a folder of its own, its run files beside it", async () => {
  const run = await RunDir.create("evidence-test");
  try {
    const a = run.store("a");
    const b = run.store("b");
    strictEqual(a, `${run.path}/a/store.db`);
    ok(Deno.statSync(`${run.path}/a`).isDirectory);
    ok(Deno.statSync(`${run.path}/b`).isDirectory);
    strictEqual(b.slice(0, b.lastIndexOf("/")), `${run.path}/b`);
    strictEqual(besideStore(a, "acks.jsonl"), `${run.path}/a.acks.jsonl`);
  } finally {
    await run.finish(true, {});
  }
});
