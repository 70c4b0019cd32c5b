// Loading a target: integers a store answers as bigints (libSQL's rowids) are read as
// numbers, in arrays and plain objects, sync or async; what is not a safe integer, and
// class instances, pass unchanged. An error class of the store's own is named by its class,
// a thrown string is an untyped error.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { loadTarget } from "./load_target.ts";
import { asNumbers, asStoreError } from "./_store_answers.ts";
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

Deno.test("asStoreError: a class of the store's own by its name, a thrown string untyped", () => {
  class StorageError extends Error {}
  class Named extends Error {
    override name = "BusyDeadlineError";
  }
  strictEqual(asStoreError(new StorageError("full")).name, "StorageError");
  strictEqual(asStoreError(new Named("busy")).name, "BusyDeadlineError");
  strictEqual(asStoreError(new TypeError("x")).name, "TypeError");
  strictEqual(asStoreError(new Error("x")).name, "Error");
  const thrownString = asStoreError("Cannot append: session not found");
  strictEqual(thrownString.name, "Error");
  strictEqual(
    thrownString.message,
    'the store threw a string, not an error: "Cannot append: session not found"',
  );
  const named = asStoreError({ name: "SessionNotFoundError", message: "no s" });
  strictEqual([named.name, named.message].join(": "), "SessionNotFoundError: no s");
  strictEqual(asStoreError(42).message, "the store threw a number, not an error: 42");
});

Deno.test("a store's null for a missing session is read as undefined", async () => {
  const target = await loadTarget(
    new URL("../testdata/jsonl_store/null_none_target.ts", import.meta.url),
  );
  const store = await target.openStore(`${testFolder()}/store.db`, {});
  try {
    strictEqual(await store.getSession?.("nobody"), undefined);
    await store.createSession("s");
    strictEqual((await store.getSession?.("s"))?.id, "s");
  } finally {
    await store.close();
  }
});
