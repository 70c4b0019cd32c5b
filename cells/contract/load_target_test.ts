// Loading a target: integers a store answers as bigints (libSQL's rowids) are read as
// numbers, in arrays and plain objects, sync, async or through a thenable; what is not a safe integer, and
// class instances, pass unchanged. An error class of the store's own is named by its class,
// a thrown string is an untyped error.
import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { loadTarget } from "./load_target.ts";
import { asNumbers, asStoreError, flagsAsBooleans, sessionNones } from "./_store_answers.ts";
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

Deno.test("a store's thenables are read as its promises are", async () => {
  const target = await loadTarget(
    new URL("../testdata/jsonl_store/thenable_target.ts", import.meta.url),
  );
  const store = await target.openStore(`${testFolder()}/store.db`, {});
  try {
    await store.createSession("s");
    strictEqual(await store.appendMessage("s", { role: "user", content: "hi" }), 1);
    deepStrictEqual(await store.getMessages("s"), [{ id: 1, role: "user", content: "hi" }]);
    strictEqual(await store.getSession?.("nobody"), undefined);
    await rejects(
      async () => await store.appendMessage("nobody", { role: "user", content: "x" }),
      (error: Error) => error.name === "NoSuchSessionError",
    );
  } finally {
    await store.close();
  }
});

Deno.test("a store's integers for booleans read as booleans", async () => {
  const target = await loadTarget(
    new URL("../testdata/sqlite_integers_target.ts", import.meta.url),
  );
  const store = await target.openStore(`${testFolder()}/store.db`, {});
  try {
    await store.createSession("s");
    deepStrictEqual(
      [
        await store.endSession?.("s", "done"),
        await store.endSession?.("s", "again"),
        await store.reopenSession?.("s"),
        await store.reopenSession?.("s"),
      ],
      [true, false, true, false],
    );
    const id = await store.appendMessage("s", { role: "user", content: "hi" });
    deepStrictEqual((await store.getMessages("s")).map((m) => [m.id, m.active]), [[id, true]]);
  } finally {
    await store.close();
  }
});

Deno.test("a store's values left out read as the contract's null", async () => {
  const target = await loadTarget(new URL("../testdata/omitted_nulls_target.ts", import.meta.url));
  const store = await target.openStore(`${testFolder()}/store.db`, {});
  try {
    await store.createSession("s");
    strictEqual(await store.getHandoffState?.("s"), null);
    const session = await store.getSession?.("s");
    deepStrictEqual(
      [session?.parentSessionId, session?.endedAt, session?.endReason, session?.handoffState],
      [null, null, null, null],
    );
    strictEqual(await store.markAttempting?.("no such obligation", 0), null);
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

Deno.test("flagsAsBooleans: a message's active flag of 0 or 1 as a boolean, nothing else", () => {
  deepStrictEqual(flagsAsBooleans([{ id: 1, active: 1 }, { id: 2, active: 0 }, { id: 3 }]), [
    { id: 1, active: true },
    { id: 2, active: false },
    { id: 3 },
  ]);
  const booleans = [{ id: 1, active: true }, { id: 2, active: false }];
  strictEqual(flagsAsBooleans(booleans), booleans);
  deepStrictEqual(flagsAsBooleans([{ active: 2 }, { active: "0" }]), [{ active: 2 }, {
    active: "0",
  }]);
  strictEqual(flagsAsBooleans(undefined), undefined);
});

Deno.test("sessionNones: a session's null fields left out read as null, a copy only then", () => {
  deepStrictEqual(sessionNones([{ id: "a", endedAt: 5 }]), [{
    id: "a",
    endedAt: 5,
    parentSessionId: null,
    endReason: null,
    handoffState: null,
  }]);
  const whole = {
    id: "b",
    parentSessionId: "a",
    endedAt: null,
    endReason: null,
    handoffState: "parked",
  };
  strictEqual(sessionNones(whole), whole);
  const list = [whole];
  strictEqual(sessionNones(list), list);
  strictEqual(sessionNones(undefined), undefined);
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
