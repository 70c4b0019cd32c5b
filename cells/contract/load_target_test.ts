// Loading a target: integers a store answers as bigints (libSQL's rowids) are read as
// numbers, in arrays and plain objects, sync or async; what is not a safe integer, and
// class instances, pass unchanged. An error class of the store's own is named by its class.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { loadTarget } from "./load_target.ts";
import { asNumbers, namedByClass } from "./_store_answers.ts";
import { testFolder } from "../../internal/_test_folder.ts";

Deno.test("a store's bigint ids are read as numbers", async () => {
  const target = await loadTarget(
    new URL("../testdata/jsonl_store/bigint_target.ts", import.meta.url),
  );
  const store = await target.openStore(`${testFolder()}/store.db`, {});
  try {
    await store.createSession("s");
    strictEqual(await store.appendMessage("s", { role: "user", content: "hi" }), 1);
    deepStrictEqual(await store.getMessages("s"), [{ id: 1, role: "user", content: "hi" }]);
  } finally {
    await store.close();
  }
});

Deno.test("asNumbers: safe integers only, plain values only, copies only where needed", async () => {
  const huge = 2n ** 60n;
  deepStrictEqual(asNumbers({ a: [1n, { b: 2n }], c: "x", d: huge }), {
    a: [1, { b: 2 }],
    c: "x",
    d: huge,
  });
  const plain = [{ id: 1 }];
  strictEqual(asNumbers(plain), plain);
  const date = new Date(0);
  strictEqual(asNumbers(date), date);
  deepStrictEqual(await Promise.resolve(asNumbers([3n])), [3]);
});

Deno.test("namedByClass: an error class of the store's own that left its name is named by it", () => {
  class StorageError extends Error {}
  class Named extends Error {
    override name = "BusyDeadlineError";
  }
  strictEqual((namedByClass(new StorageError("full")) as Error).name, "StorageError");
  strictEqual((namedByClass(new Named("busy")) as Error).name, "BusyDeadlineError");
  strictEqual((namedByClass(new TypeError("x")) as Error).name, "TypeError");
  strictEqual((namedByClass(new Error("x")) as Error).name, "Error");
  strictEqual(namedByClass("text"), "text");
});
