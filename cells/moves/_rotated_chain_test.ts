import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { openTargetStore } from "../contract/target.ts";
import { rotatedChainTrace } from "./_rotated_chain.ts";

const TARGET = new URL("../reference_target.ts", import.meta.url).href;
const HOUR = 3_600_000;

Deno.test("rotatedChainTrace: a published child is the one live tip; a parent live beside it is named", async () => {
  const dir = await Deno.makeTempDir();
  const store = await openTargetStore(TARGET, `${dir}/store.db`);
  try {
    await store.createSession("x");
    await store.appendMessage("x", { role: "user", content: "turn 0" });
    ok(await store.tryAcquireCompressionLock!("x", "h:pid=1", HOUR));
    await store.publishCompressionChild!({
      parentId: "x",
      childId: "c",
      holder: "h:pid=1",
      messages: [{ role: "system", content: "summary" }],
    });
    strictEqual(await rotatedChainTrace(store, { parent: "x", child: "c" }), undefined);
    // Two sessions never rotated: the "parent" live and resolving to itself.
    await store.createSession("y");
    await store.createSession("d");
    const found = await rotatedChainTrace(store, { parent: "y", child: "d" });
    deepStrictEqual(found?.split("; "), [
      'the chain y -> d has the live tips ["d","y"]',
      'resolveResumeSessionId(y) returned "y", not d',
    ]);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
