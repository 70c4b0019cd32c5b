// Loading a target: integers a store answers as bigints (libSQL's rowids) are read as
// numbers, in arrays and plain objects, sync, async or through a thenable; what is not a safe
// integer passes unchanged; a record in a class instance (an ORM's entity) is read as a plain
// object, a field named in another case by the contract's name. An error class of the store's
// own is named by its class, a thrown string is an untyped error; a not-found error where the
// contract's none is `undefined` is that none.
import { deepStrictEqual, rejects, strictEqual, throws } from "node:assert/strict";
import { crashPointsSetting, loadTarget, targetSpecifier } from "./load_target.ts";
import { asStoreError, saysNotFound } from "./_store_answers.ts";
import {
  asContractNames,
  asInteger,
  asNumbers,
  asPlainRecords,
  asViolations,
  namesOf,
  readerOf,
  readMessages,
  readSessions,
} from "./_answer_readings.ts";
import { testFolder } from "../../internal/_test_folder.ts";

// A path is read as a path: a "#" in a folder's name started a URL's fragment, and the target
// was "not found" in the folder cut there.
Deno.test("a target given as a path loads from a folder named with #, %, a space or a comma", async () => {
  const folder = `${testFolder()}/Store #1, 100% ü`;
  Deno.mkdirSync(folder);
  const reference = new URL("../reference_target.ts", import.meta.url).href;
  Deno.writeTextFileSync(`${folder}/target.ts`, `export * from "${reference}";\n`);
  const specifier = targetSpecifier(`${folder}/target.ts`);
  strictEqual(
    new URL(specifier).pathname.endsWith("/Store%20%231,%20100%25%20%C3%BC/target.ts"),
    true,
    specifier,
  );
  const target = await loadTarget(`${folder}/target.ts`);
  const store = await target.openStore(`${folder}/store.db`, {});
  try {
    await store.createSession("s");
    strictEqual(await store.appendMessage("s", { role: "user", content: "hi" }), 1);
  } finally {
    await store.close();
  }
  strictEqual(targetSpecifier(specifier), specifier);
});

// A store judged in another isolate of the process may leave it in a folder since removed,
// where reading the working directory throws: a URL or an absolute path never reads it.
Deno.test("a target given as a URL or an absolute path does not read the working directory", () => {
  const cwd = Deno.cwd();
  const gone = testFolder();
  Deno.chdir(gone);
  Deno.removeSync(gone);
  try {
    strictEqual(targetSpecifier("file:///srv/a.ts"), "file:///srv/a.ts");
    strictEqual(targetSpecifier("/srv/a b.ts"), "file:///srv/a%20b.ts");
    strictEqual(targetSpecifier("a.ts", "/srv/"), "file:///srv/a.ts");
    throws(() => targetSpecifier("a.ts"), Deno.errors.NotFound);
  } finally {
    Deno.chdir(cwd);
  }
});

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

Deno.test("a store's not-found errors are read as none where the contract has undefined", async () => {
  const target = await loadTarget(new URL("../testdata/not_found_target.ts", import.meta.url));
  const store = await target.openStore(`${testFolder()}/store.db`, {});
  try {
    await store.createSession("s");
    strictEqual(await store.getSession?.("none"), undefined);
    strictEqual(await store.getObligation?.("none"), undefined);
    strictEqual(await store.findLiveCompressionChild?.("s"), undefined);
    strictEqual((await store.getSession?.("s"))?.id, "s");
  } finally {
    await store.close();
  }
});

Deno.test("saysNotFound: a name with NotFound in it or ENOENT, nothing else", () => {
  const named = (name: string) => Object.assign(new Error("x"), { name });
  for (const name of ["NotFound", "NotFoundError", "SessionNotFoundError", "EntityNotFoundError"]) {
    strictEqual(saysNotFound(named(name)), true, name);
  }
  strictEqual(saysNotFound(Object.assign(new Error("x"), { code: "ENOENT" })), true);
  strictEqual(saysNotFound(new Deno.errors.NotFound("x")), true);
  for (const name of ["Error", "SqliteError", "SessionEndedError", "BusyDeadlineError"]) {
    strictEqual(saysNotFound(named(name)), false, name);
  }
  strictEqual(saysNotFound(new Error("session not found")), false);
});

Deno.test("a not-found error elsewhere is still thrown", async () => {
  const target = await loadTarget(new URL("../testdata/not_found_target.ts", import.meta.url));
  const store = await target.openStore(`${testFolder()}/store.db`, {});
  try {
    await rejects(
      async () => await store.appendMessage("none", { role: "user", content: "hi" }),
      { name: "SessionNotFoundError" },
    );
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

Deno.test("asPlainRecords: a record in a class instance as its fields, built-ins unchanged", () => {
  class Entity {
    id = 1;
    active = 1;
  }
  class Model {
    #fields = { id: 2n, state: "PENDING" };
    get id() {
      return this.#fields.id;
    }
    get state() {
      return this.#fields.state;
    }
    get broken(): never {
      throw new Error("not loaded");
    }
    method() {}
  }
  deepStrictEqual(asPlainRecords([new Entity(), { nested: [new Model()] }]), [
    { id: 1, active: 1 },
    { nested: [{ id: 2n, state: "PENDING" }] },
  ]);
  const kept = [{ id: 1 }, new Date(0), new Map(), new Uint8Array(1), new Error("e"), null, 3];
  strictEqual(asPlainRecords(kept), kept);
  // A relation back to its owner stays the instance it is, once the owner is being read.
  class Owner {
    id = "s";
    children: object[] = [];
  }
  const owner = new Owner();
  owner.children.push(Object.assign(new Entity(), { owner }));
  const read = asPlainRecords(owner) as { children: { owner: unknown }[] };
  strictEqual(read.children[0]?.owner, owner);
  // Every other reading reads the plain record.
  deepStrictEqual(readerOf("getMessages")([new Entity()]), [{ id: 1, active: true }]);
  deepStrictEqual(readerOf("getObligation")(new Model()), { id: 2, state: "pending" });
});

Deno.test("asContractNames: a record's fields in another case by the contract's names", () => {
  deepStrictEqual(
    asContractNames([
      { id: "s", parent_session_id: "p", ended_at: null, extra_field: 1 },
      { ID: 3, Role: "user", "end-reason": "x", ParentSessionID: "q" },
      { obligation: { obligation_id: "o", delivery_fence: 2 }, idempotency_key: "k" },
    ]),
    [
      { id: "s", parentSessionId: "p", endedAt: null, extra_field: 1 },
      { id: 3, role: "user", endReason: "x", parentSessionId: "q" },
      { obligation: { obligationId: "o", deliveryFence: 2 }, idempotencyKey: "k" },
    ],
  );
  // The contract's own name wins over another spelling of it, which stays as it is.
  deepStrictEqual(asContractNames({ endedAt: 1, ended_at: 2 }), { endedAt: 1, ended_at: 2 });
  const named = [{ id: 1, parentSessionId: null, other_thing: 1 }, "x", new Date(0)];
  strictEqual(asContractNames(named), named);
  // Every other reading reads the renamed record.
  deepStrictEqual(readerOf("getSession")({ ID: "s", ended_at: "7" }), {
    id: "s",
    endedAt: 7,
    parentSessionId: null,
    endReason: null,
    handoffState: null,
  });
});

Deno.test("Go's zero values where the contract's none is null or undefined read as that none", () => {
  deepStrictEqual(
    readerOf("getSession")({
      id: "s",
      parentSessionId: "",
      endedAt: 0,
      endReason: "",
      handoffState: "",
    }),
    { id: "s", parentSessionId: null, endedAt: null, endReason: null, handoffState: null },
  );
  // An ended session keeps its end; a decimal zero is a zero.
  deepStrictEqual(readerOf("listSessions")([{ id: "e", endedAt: "0" }, { id: "f", endedAt: 7 }]), [
    { id: "e", endedAt: null, parentSessionId: null, endReason: null, handoffState: null },
    { id: "f", endedAt: 7, parentSessionId: null, endReason: null, handoffState: null },
  ]);
  strictEqual(
    (readerOf("getSession")({ id: "s", endedAt: "0001-01-01T00:00:00Z" }) as { endedAt: unknown })
      .endedAt,
    null,
  );
  strictEqual(readerOf("getSession")({ id: "", endedAt: 0 }), undefined);
  strictEqual(readerOf("getObligation")({ obligationId: "", deliveryFence: 0 }), undefined);
  strictEqual(readerOf("getHandoffState")(""), null);
  deepStrictEqual(readerOf("getObligation")({ obligationId: "o", lastError: "" }), {
    obligationId: "o",
    lastError: null,
  });
  // A fence of 0 stays a fence: only an absent answer is none there.
  strictEqual(readerOf("markAttempting")(0), 0);
});

Deno.test("readMessages: an active flag of 0 or 1 as a boolean, a role in any case", () => {
  deepStrictEqual(readMessages([{ id: 1, active: 1 }, { id: 2, active: 0 }, { id: 3 }]), [
    { id: 1, active: true },
    { id: 2, active: false },
    { id: 3 },
  ]);
  const booleans = [{ id: 1, active: true }, { id: 2, active: false }];
  strictEqual(readMessages(booleans), booleans);
  // A soft delete's field, or `isActive`, says it when `active` is not there.
  deepStrictEqual(
    (readMessages([
      { id: 1, deletedAt: null },
      { id: 2, deleted_at: new Date(0) },
      { id: 3, isDeleted: 1 },
      { id: 4, is_active: 0 },
      { id: 5, active: true, deletedAt: new Date(0) },
      { id: 6, DeletedAt: "0001-01-01T00:00:00Z" },
    ]) as { active?: unknown }[]).map((message) => message.active),
    [true, false, false, false, true, true],
  );
  deepStrictEqual(readMessages([{ id: 1, role: "USER" }, { id: 2, role: "Robot" }]), [
    { id: 1, role: "user" },
    { id: 2, role: "Robot" },
  ]);
  deepStrictEqual(readMessages([{ active: 2 }, { active: "0" }]), [{ active: 2 }, {
    active: "0",
  }]);
  strictEqual(readMessages(undefined), undefined);
});

Deno.test("asInteger: a decimal string of a safe integer as written, nothing else", () => {
  deepStrictEqual(["0", "42", "-3", "9007199254740991"].map(asInteger), [0, 42, -3, 2 ** 53 - 1]);
  for (const kept of ["042", "4.0", " 4", "4 ", "+4", "-0x1", "1e3", "", "9007199254740993", "a"]) {
    strictEqual(asInteger(kept), kept, kept);
  }
  strictEqual(asInteger(5), 5);
  strictEqual(asInteger(null), null);
});

Deno.test("namesOf: the contract's names in another case as it writes them, nothing else", () => {
  const state = namesOf(["pending", "running"]);
  deepStrictEqual(["PENDING", "Running", "pending", "PENDINGS", "done", 1].map(state), [
    "pending",
    "running",
    "pending",
    "PENDINGS",
    "done",
    1,
  ]);
  strictEqual(readerOf("getHandoffState")("RUNNING"), "running");
  deepStrictEqual(
    readerOf("sweepRecoverable")([{ action: "RESEND", obligation: { state: "Attempting" } }]),
    [{ action: "resend", obligation: { state: "attempting" } }],
  );
  const [session] = readerOf("listPendingHandoffs")([{ id: "s", handoffState: "PENDING" }]) as {
    handoffState: unknown;
  }[];
  strictEqual(session?.handoffState, "pending");
});

Deno.test("asViolations: none as [], a string as a list of it, anything else named", () => {
  deepStrictEqual(asViolations(undefined), []);
  deepStrictEqual(asViolations(null), []);
  deepStrictEqual(asViolations(""), []);
  deepStrictEqual(asViolations("orphan message 3"), ["orphan message 3"]);
  const list = ["a"];
  strictEqual(asViolations(list), list);
  deepStrictEqual(asViolations(true), ["checkInvariants answered true, not a list of violations"]);
  deepStrictEqual(asViolations({ ok: false }), [
    'checkInvariants answered {"ok":false}, not a list of violations',
  ]);
  deepStrictEqual(readerOf("checkInvariants")(undefined), []);
});

Deno.test("readerOf: integers spelled in decimal where the contract has one, nowhere else", () => {
  strictEqual(readerOf("appendMessage")("12"), 12);
  deepStrictEqual(readerOf("appendMessages")(["3", "4"]), [3, 4]);
  deepStrictEqual(readerOf("getMessages")([{ id: "7", role: "user", content: "12", active: 1 }]), [
    { id: 7, role: "user", content: "12", active: true },
  ]);
  strictEqual(readerOf("markAttempting")("2"), 2);
  strictEqual(readerOf("markAttempting")(undefined), null);
  deepStrictEqual(readerOf("getObligation")({ obligationId: "9", deliveryFence: "1" }), {
    obligationId: "9",
    deliveryFence: 1,
  });
  deepStrictEqual(
    readerOf("sweepRecoverable")([{ action: "send", obligation: { deliveryFence: "3" } }]),
    [{ action: "send", obligation: { deliveryFence: 3 } }],
  );
  deepStrictEqual(readerOf("getSession")({ id: "5", endedAt: "17", endReason: "user" }), {
    id: "5",
    endedAt: 17,
    endReason: "user",
    parentSessionId: null,
    handoffState: null,
  });
  strictEqual(readerOf("getSession")(null), undefined);
  strictEqual(readerOf("getHandoffState")("1"), "1");
  strictEqual(readerOf("claimHandoff")("1"), "1");
  const [listed] = readerOf("listSessions")([{ id: "1" }]) as { id: unknown }[];
  strictEqual(listed?.id, "1");
});

Deno.test("readSessions: a session's null fields left out read as null, a copy only then", () => {
  deepStrictEqual(readSessions([{ id: "a", endedAt: 5 }]), [{
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
  strictEqual(readSessions(whole), whole);
  const list = [whole];
  strictEqual(readSessions(list), list);
  strictEqual(readSessions(undefined), undefined);
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

/** A target module in a file of its own, of `source`. */
async function targetOf(source: string) {
  const path = `${testFolder()}/target.ts`;
  Deno.writeTextFileSync(path, source);
  return await loadTarget(new URL(`file://${path}`));
}

/** A target whose `openStore` opens `{}`, with the given `crashPoints` export. */
const targetWithPoints = (declaration: string) =>
  targetOf(`export function openStore() { return {}; }\nexport ${declaration}\n`);

Deno.test("a target's crash points are read as a list of names, nothing as none", async () => {
  const exported = await targetWithPoints(`const crashPoints = ["a:before", "a:after"];`);
  deepStrictEqual(exported.crashPoints?.(), ["a:before", "a:after"]);
  const silent = await targetWithPoints("function crashPoints() {}");
  deepStrictEqual(silent.crashPoints?.(), []);
  const listed = await targetWithPoints(`function crashPoints() { return ["b:after"]; }`);
  deepStrictEqual(listed.crashPoints?.(), ["b:after"]);
});

Deno.test("under CELLS_CRASH_POINTS=none a target is judged as declaring none", async () => {
  const target = await targetWithPoints(`function crashPoints() { return ["b:after"]; }`);
  Deno.env.set("CELLS_CRASH_POINTS", "none");
  try {
    deepStrictEqual(target.crashPoints?.(), []);
    // Still checked: a bad export is the target's error whichever the setting.
    const bad = await targetWithPoints(`const crashPoints = "a:before";`);
    throws(() => bad.crashPoints?.(), { name: "TargetError" });
    Deno.env.set("CELLS_CRASH_POINTS", "declared");
    deepStrictEqual(target.crashPoints?.(), ["b:after"]);
    Deno.env.set("CELLS_CRASH_POINTS", "off");
    throws(() => target.crashPoints?.(), /Invalid CELLS_CRASH_POINTS "off": use declared or none/);
  } finally {
    Deno.env.delete("CELLS_CRASH_POINTS");
  }
  strictEqual(crashPointsSetting(), "declared");
});

Deno.test("crash points that are not a list of names fail naming the export", async () => {
  for (
    const [declaration, said] of [
      [`async function crashPoints() { return ["a"]; }`, "returned a promise"],
      ["function crashPoints() { return [1]; }", "returned [1]"],
      [`const crashPoints = "a:before";`, `is "a:before"`],
      [`function crashPoints() { throw new Error("no env"); }`, "threw no env"],
    ]
  ) {
    const target = await targetWithPoints(declaration!);
    let error: unknown;
    try {
      target.crashPoints?.();
    } catch (thrown) {
      error = thrown;
    }
    strictEqual((error as Error | undefined)?.name, "TargetError", declaration);
    strictEqual(
      (error as Error).message.includes(`crashPoints ${said}, not a list of the crash point names`),
      true,
      (error as Error).message,
    );
  }
});

Deno.test("an openStore that answers no store fails naming what it answered", async () => {
  for (
    const [source, said] of [
      ["export async function openStore() {}", "undefined"],
      ["export function openStore() { return null; }", "null"],
      [`export function openStore() { return "store.db"; }`, `"store.db"`],
    ]
  ) {
    const target = await targetOf(source!);
    await rejects(
      async () => await target.openStore(`${testFolder()}/store.db`, {}),
      (error: Error) =>
        error.name === "TargetError" &&
        error.message.includes(`openStore returned ${said}, not the opened store`),
      source,
    );
  }
});
