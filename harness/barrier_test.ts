import { ok, strictEqual } from "node:assert/strict";
import { awaitBarrier, countReady, releaseBarrier, signalReady } from "./barrier.ts";

Deno.test("a file barrier releases waiters and counts ready children", () => {
  const dir = Deno.makeTempDirSync();
  ok(!awaitBarrier(`${dir}/go`, 5), "an unreleased barrier must time out");
  signalReady(dir, "a");
  signalReady(dir, "b");
  strictEqual(countReady(dir), 2);
  releaseBarrier(`${dir}/go`);
  ok(awaitBarrier(`${dir}/go`, 1000));
  Deno.removeSync(dir, { recursive: true });
});
