import assert from "node:assert/strict";
import { join } from "node:path";
import {
  BusyDeadlineError,
  CompressionLockError,
  CompressionSessionClosedError,
  crashPoints,
  Database,
  InvalidArgumentError,
  type Message,
  obligationId,
  RewindConflictError,
  SchemaVersionError,
  SessionDB,
  SessionDBClosedError,
  SessionDBError,
  SessionDBOpenError,
  type SessionDBOptions,
  SessionEndedError,
  SessionNotFoundError,
  sqliteLibraryPath,
  STORE_CRASH_POINTS,
  STORE_SCHEMA_VERSION,
} from "./mod.ts";
import { deadPid, runDeno, tempDir } from "./_test_helpers.ts";

const FIXTURE_V1 = new URL("./testdata/schema_v1.sql", import.meta.url);
const OPEN_STORE = new URL("./testdata/open_store.ts", import.meta.url);
const APPEND_MESSAGES = new URL("./testdata/append_messages.ts", import.meta.url);

/** A store in a fresh folder; the folder is removed on dispose. */
function scratch(options: SessionDBOptions = {}): { db: SessionDB; path: string } & Disposable {
  const dir = tempDir();
  const path = join(dir.path, "sessions.db");
  const db = SessionDB.open(path, options);
  return {
    db,
    path,
    [Symbol.dispose]() {
      db.close();
      dir[Symbol.dispose]();
    },
  };
}

/** A second, raw connection to the same file, for corrupting or inspecting it. */
function raw(path: string): Database {
  const db = new Database(path);
  db.setBusyTimeout(5000);
  return db;
}

function append(db: SessionDB, sessionId: string, roles: Message["role"][]): number[] {
  return roles.map((role, i) => db.appendMessage(sessionId, { role, content: `${role}${i}` }));
}

function ids(messages: Message[]): number[] {
  return messages.map((m) => m.id);
}

function sha256(path: string): Promise<string> {
  return crypto.subtle.digest("SHA-256", Deno.readFileSync(path)).then((digest) =>
    Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("")
  );
}

function holder(name: string, pid = Deno.pid): string {
  return `${name}:pid=${pid}`;
}

// --- open, files, schema ----------------------------------------------------------

Deno.test("open creates the database file with mode 0600, journals included", () => {
  using store = scratch({ journalMode: "wal" });
  store.db.createSession("s");
  const mode = (path: string) => Deno.statSync(path).mode! & 0o777;
  assert.equal(mode(store.path), 0o600);
  if (store.db.journalMode === "wal") {
    // While the connection is open the WAL and shared-memory files exist.
    assert.equal(mode(`${store.path}-wal`), 0o600);
    assert.equal(mode(`${store.path}-shm`), 0o600);
  }
});

Deno.test("open in a missing folder is a SessionDBOpenError naming the folder", () => {
  using dir = tempDir();
  const folder = join(dir.path, "no", "such");
  const path = join(folder, "sessions.db");
  assert.throws(
    () => SessionDB.open(path),
    (error: unknown) =>
      error instanceof SessionDBOpenError && error.message.includes(`"${folder}"`) &&
      /does not exist/.test(error.message),
  );
});

Deno.test("open of a file that is not a database is a SessionDBOpenError, file untouched", () => {
  using dir = tempDir();
  const path = join(dir.path, "notes.db");
  const bytes = new TextEncoder().encode("these are notes, not a database\n".repeat(200));
  Deno.writeFileSync(path, bytes);
  assert.throws(
    () => SessionDB.open(path),
    (error: unknown) => error instanceof SessionDBOpenError && /not a database/.test(error.message),
  );
  assert.deepEqual(Deno.readFileSync(path), bytes);
});

Deno.test("open rejects an empty path and an unknown journal mode option", () => {
  assert.throws(() => SessionDB.open(""), InvalidArgumentError);
  using dir = tempDir();
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => SessionDB.open(join(dir.path, "s.db"), { journalMode: "memory" as any }),
    InvalidArgumentError,
  );
});

Deno.test("a new file gets the current schema version", () => {
  using store = scratch();
  using conn = raw(store.path);
  assert.deepEqual(conn.prepare("SELECT version FROM schema_version").values(), [[
    STORE_SCHEMA_VERSION,
  ]]);
  assert.ok(store.db.isOpen);
  assert.equal(store.db.path, store.path);
  assert.match(store.db.sqliteVersion, /^3\.\d+\.\d+$/);
});

Deno.test("migration from schema v1 keeps the data and adds the new columns", () => {
  using dir = tempDir();
  const path = join(dir.path, "v1.db");
  const v1 = new Database(path);
  v1.exec(Deno.readTextFileSync(FIXTURE_V1));
  v1.close();

  const db = SessionDB.open(path);
  try {
    const parent = db.getSession("old-parent");
    const child = db.getSession("old-child");
    assert.ok(parent && child);
    assert.equal(parent.endReason, "compression");
    assert.equal(parent.branchKind, null);
    assert.equal(parent.messageCount, 2);
    assert.equal(parent.rewindCount, 0);
    assert.equal(parent.title, null);
    assert.equal(parent.handoffError, null);
    assert.equal(child.branchKind, "continuation");
    assert.equal(child.parentSessionId, "old-parent");
    assert.equal(child.handoffState, "pending");
    assert.equal(child.handoffPlatform, "telegram");
    assert.deepEqual(
      db.getMessages("old-parent").map((m) => [m.role, m.content, m.active]),
      [["user", "hello", true], ["assistant", "hi", true]],
    );
    assert.deepEqual(db.getMessages("old-child").map((m) => m.content), ["summary"]);
    assert.equal(db.resolveResumeSessionId("old-parent"), "old-child");
    assert.throws(
      () => db.appendMessage("old-parent", { role: "user", content: "x" }),
      CompressionSessionClosedError,
    );
    db.appendMessage("old-child", { role: "user", content: "after migration" });
    assert.deepEqual(db.listObligations(), []);
    assert.deepEqual(db.checkInvariants(), []);
  } finally {
    db.close();
  }
  using conn = raw(path);
  assert.deepEqual(conn.prepare("SELECT version FROM schema_version").values(), [[
    STORE_SCHEMA_VERSION,
  ]]);
  // A second open does not migrate again.
  const again = SessionDB.open(path);
  assert.equal(again.getMessages("old-child").length, 2);
  again.close();
});

Deno.test("a newer schema is a SchemaVersionError and leaves the file byte-identical", async () => {
  using dir = tempDir();
  const path = join(dir.path, "future.db");
  const first = SessionDB.open(path, { journalMode: "delete" });
  first.createSession("s");
  first.close();
  const conn = raw(path);
  conn.exec("UPDATE schema_version SET version = 99");
  conn.close();
  const before = await sha256(path);
  const listing = () => [...Deno.readDirSync(dir.path)].map((e) => e.name).sort();
  const filesBefore = listing();

  for (const options of [{}, { journalMode: "wal" as const }, { readonly: true }]) {
    assert.throws(
      () => SessionDB.open(path, options),
      (error: unknown) =>
        error instanceof SchemaVersionError && /99/.test(error.message) &&
        /untouched/.test(error.message),
    );
  }
  assert.equal(await sha256(path), before);
  assert.deepEqual(listing(), filesBefore);
});

Deno.test("read-only open reads, refuses writes, and needs a migrated file", () => {
  using dir = tempDir();
  const path = join(dir.path, "ro.db");
  const writer = SessionDB.open(path);
  writer.createSession("s", { title: "t" });
  writer.appendMessage("s", { role: "user", content: "hello" });
  writer.close();

  const ro = SessionDB.open(path, { readonly: true });
  try {
    assert.equal(ro.getSession("s")?.title, "t");
    assert.deepEqual(ro.getMessages("s").map((m) => m.content), ["hello"]);
    assert.deepEqual(ro.checkInvariants(), []);
    assert.throws(
      () => ro.appendMessage("s", { role: "user", content: "x" }),
      (error: unknown) => error instanceof SessionDBError && /read-only/.test(error.message),
    );
    assert.throws(() => ro.createSession("t"), SessionDBError);
  } finally {
    ro.close();
  }

  assert.throws(
    () => SessionDB.open(join(dir.path, "missing.db"), { readonly: true }),
    SessionDBOpenError,
  );
  const v1Path = join(dir.path, "v1.db");
  const v1 = new Database(v1Path);
  v1.exec(Deno.readTextFileSync(FIXTURE_V1));
  v1.close();
  assert.throws(
    () => SessionDB.open(v1Path, { readonly: true }),
    (error: unknown) => error instanceof SessionDBOpenError && /migration/.test(error.message),
  );
});

Deno.test("a write that stays busy past the deadline is a BusyDeadlineError", () => {
  using store = scratch({ busyTimeoutMs: 0, busyDeadlineMs: 30 });
  store.db.createSession("s");
  using conn = raw(store.path);
  conn.exec("BEGIN IMMEDIATE");
  try {
    assert.throws(() => store.db.createSession("t"), BusyDeadlineError);
    assert.throws(
      () => store.db.appendMessage("s", { role: "user", content: "x" }),
      BusyDeadlineError,
    );
  } finally {
    conn.exec("ROLLBACK");
  }
  store.db.appendMessage("s", { role: "user", content: "x" });
  assert.equal(store.db.messageCount("s"), 1);
});

// --- closed store -----------------------------------------------------------------

Deno.test("every method after close is a SessionDBClosedError; close is idempotent", () => {
  using store = scratch();
  const db = store.db;
  db.close();
  db.close();
  assert.ok(!db.isOpen);
  const publish = { parentId: "p", childId: "c", holder: "h", messages: [] };
  const calls: Record<string, () => unknown> = {
    createSession: () => db.createSession("s"),
    ensureSession: () => db.ensureSession("s"),
    endSession: () => db.endSession("s", "x"),
    reopenSession: () => db.reopenSession("s"),
    getSession: () => db.getSession("s"),
    listSessions: () => db.listSessions(),
    appendMessage: () => db.appendMessage("s", { role: "user", content: "x" }),
    appendMessages: () => db.appendMessages("s", [{ role: "user", content: "x" }]),
    getMessages: () => db.getMessages("s"),
    messageCount: () => db.messageCount("s"),
    requestHandoff: () => db.requestHandoff("s", "telegram"),
    claimHandoff: () => db.claimHandoff("s"),
    completeHandoff: () => db.completeHandoff("s"),
    failHandoff: () => db.failHandoff("s", "x"),
    getHandoffState: () => db.getHandoffState("s"),
    listPendingHandoffs: () => db.listPendingHandoffs(),
    tryAcquireCompressionLock: () => db.tryAcquireCompressionLock("s", "h", 1000),
    refreshCompressionLock: () => db.refreshCompressionLock("s", "h", 1000),
    releaseCompressionLock: () => db.releaseCompressionLock("s", "h"),
    publishCompressionChild: () => db.publishCompressionChild(publish),
    findLiveCompressionChild: () => db.findLiveCompressionChild("s"),
    reopenOrphanedCompressionSession: () => db.reopenOrphanedCompressionSession("s"),
    resolveResumeSessionId: () => db.resolveResumeSessionId("s"),
    rewindToMessage: () => db.rewindToMessage("s", 1),
    forkSession: () => db.forkSession("s", 1, "f"),
    recordObligation: () => db.recordObligation({ sessionId: "s", messageRef: "m", content: "c" }),
    markAttempting: () => db.markAttempting("o", 0),
    markDelivered: () => db.markDelivered("o", 1),
    markFailed: () => db.markFailed("o", 0, "x"),
    markUnknown: () => db.markUnknown("o", 0, "x"),
    sweepRecoverable: () => db.sweepRecoverable(),
    getObligation: () => db.getObligation("o"),
    listObligations: () => db.listObligations(),
    checkInvariants: () => db.checkInvariants(),
  };
  // Every public method is covered (a new one must be added here).
  const methods = Object.getOwnPropertyNames(SessionDB.prototype).filter((name) => {
    const descriptor = Object.getOwnPropertyDescriptor(SessionDB.prototype, name)!;
    return typeof descriptor.value === "function" && name !== "constructor" && name !== "close";
  });
  assert.deepEqual(methods.sort(), Object.keys(calls).sort());
  for (const [name, call] of Object.entries(calls)) {
    assert.throws(call, SessionDBClosedError, name);
  }
});

// --- sessions ---------------------------------------------------------------------

Deno.test("session ids: empty, over 256 characters and NUL are refused; 256 is fine", () => {
  using store = scratch();
  const db = store.db;
  for (const bad of ["", "x".repeat(257), "a\0b"]) {
    assert.throws(() => db.createSession(bad), InvalidArgumentError);
    assert.throws(() => db.ensureSession(bad), InvalidArgumentError);
    assert.throws(
      () => db.appendMessage(bad, { role: "user", content: "x" }),
      InvalidArgumentError,
    );
    assert.throws(() => db.forkSession("s", 1, bad), InvalidArgumentError);
  }
  assert.throws(() => db.createSession("x".repeat(257)), /257 characters.*256/);
  const longest = "y".repeat(256);
  assert.equal(db.createSession(longest).id, longest);
  db.appendMessage(longest, { role: "user", content: "ok" });
  assert.equal(db.messageCount(longest), 1);
});

Deno.test("createSession, ensureSession, getSession and listSessions", () => {
  using store = scratch();
  const db = store.db;
  const a = db.createSession("a", { source: "telegram" });
  assert.deepEqual(
    { ...a, startedAt: 0 },
    {
      id: "a",
      source: "telegram",
      parentSessionId: null,
      branchKind: null,
      startedAt: 0,
      endedAt: null,
      endReason: null,
      messageCount: 0,
      handoffState: null,
      handoffPlatform: null,
      handoffError: null,
      rewindCount: 0,
      title: null,
    },
  );
  assert.ok(a.startedAt > 1_600_000_000);
  // Creating again keeps the values and only fills a missing title.
  const again = db.createSession("a", { source: "cli", title: "first" });
  assert.equal(again.source, "telegram");
  assert.equal(again.title, "first");
  assert.equal(db.createSession("a", { title: "second" }).title, "first");
  assert.equal(db.ensureSession("a", { title: "third" }).title, "first");
  assert.equal(db.ensureSession("b").source, "cli");
  db.createSession("c", { source: "telegram" });
  assert.equal(db.getSession("missing"), undefined);
  assert.deepEqual(db.listSessions().map((s) => s.id), ["a", "b", "c"]);
  assert.deepEqual(db.listSessions({ source: "telegram" }).map((s) => s.id), ["a", "c"]);
  assert.deepEqual(db.listSessions({ limit: 2 }).map((s) => s.id), ["a", "b"]);
});

Deno.test("endSession keeps the first reason; reopenSession reopens", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  assert.equal(db.endSession("s", "user_exit"), true);
  assert.equal(db.endSession("s", "timeout"), false);
  const ended = db.getSession("s")!;
  assert.equal(ended.endReason, "user_exit");
  assert.ok(ended.endedAt !== null);
  assert.equal(db.reopenSession("s"), true);
  assert.equal(db.reopenSession("s"), false);
  assert.equal(db.getSession("s")!.endedAt, null);
  assert.equal(db.getSession("s")!.endReason, null);
  assert.deepEqual(db.checkInvariants(), []);
});

Deno.test("an append to an ended session is SessionEndedError and changes nothing", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  db.appendMessage("s", { role: "user", content: "before" });
  db.endSession("s", "user_exit");
  assert.throws(() => db.appendMessage("s", { role: "user", content: "x" }), SessionEndedError);
  assert.throws(() => db.appendMessages("s", [{ role: "user", content: "x" }]), SessionEndedError);
  assert.deepEqual(db.getMessages("s").map((m) => m.content), ["before"]);
  db.reopenSession("s");
  db.appendMessage("s", { role: "user", content: "after" });
  assert.equal(db.messageCount("s"), 2);
});

Deno.test("operations on an unknown session are SessionNotFoundError", () => {
  using store = scratch();
  const db = store.db;
  const calls = [
    () => db.endSession("nope", "x"),
    () => db.reopenSession("nope"),
    () => db.appendMessage("nope", { role: "user", content: "x" }),
    () => db.appendMessages("nope", [{ role: "user", content: "x" }]),
    () => db.requestHandoff("nope", "telegram"),
    () => db.tryAcquireCompressionLock("nope", holder("h"), 1000),
    () => db.rewindToMessage("nope", 1),
    () => db.forkSession("nope", 1, "branch"),
    () => db.recordObligation({ sessionId: "nope", messageRef: "m", content: "c" }),
    () => db.reopenOrphanedCompressionSession("nope"),
  ];
  for (const call of calls) assert.throws(call, SessionNotFoundError);
  assert.throws(() => db.appendMessage("nope", { role: "user", content: "x" }), /createSession/);
  // Reads of an unknown session are empty, not errors.
  assert.deepEqual(db.getMessages("nope"), []);
  assert.equal(db.messageCount("nope"), 0);
  assert.equal(db.getHandoffState("nope"), null);
  assert.equal(db.claimHandoff("nope"), false);
  assert.equal(db.resolveResumeSessionId("nope"), "nope");
  assert.deepEqual(db.listSessions(), []);
});

// --- messages ---------------------------------------------------------------------

Deno.test("appendMessage stores every field and returns increasing ids", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const a = db.appendMessage("s", { role: "user", content: "hi" });
  const b = db.appendMessage("s", {
    role: "assistant",
    content: null,
    toolCalls: '[{"id":"call-1"}]',
  });
  const c = db.appendMessage("s", {
    role: "tool",
    content: "42",
    toolCallId: "call-1",
    toolName: "calc",
  });
  assert.ok(a < b && b < c);
  const messages = db.getMessages("s");
  assert.deepEqual(ids(messages), [a, b, c]);
  assert.deepEqual(
    messages.map(({ role, content, toolCallId, toolCalls, toolName, active, sessionId }) => ({
      role,
      content,
      toolCallId,
      toolCalls,
      toolName,
      active,
      sessionId,
    })),
    [
      {
        role: "user",
        content: "hi",
        toolCallId: null,
        toolCalls: null,
        toolName: null,
        active: true,
        sessionId: "s",
      },
      {
        role: "assistant",
        content: null,
        toolCallId: null,
        toolCalls: '[{"id":"call-1"}]',
        toolName: null,
        active: true,
        sessionId: "s",
      },
      {
        role: "tool",
        content: "42",
        toolCallId: "call-1",
        toolName: "calc",
        toolCalls: null,
        active: true,
        sessionId: "s",
      },
    ],
  );
  assert.ok(messages.every((m) => typeof m.timestamp === "number" && m.timestamp > 0));
  assert.equal(db.messageCount("s"), 3);
  assert.equal(db.getSession("s")!.messageCount, 3);
});

Deno.test("an invalid role or content is an InvalidArgumentError and writes nothing", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  // deno-lint-ignore no-explicit-any
  const robot = { role: "robot", content: "beep" } as any;
  assert.throws(() => db.appendMessage("s", robot), /Invalid message role "robot"/);
  assert.throws(() => db.appendMessage("s", robot), InvalidArgumentError);
  assert.throws(
    // deno-lint-ignore no-explicit-any
    () => db.appendMessage("s", { role: "user", content: 42 as any }),
    InvalidArgumentError,
  );
  assert.throws(
    () => db.appendMessages("s", [{ role: "user", content: "ok" }, robot]),
    InvalidArgumentError,
  );
  assert.deepEqual(db.getMessages("s"), []);
  assert.equal(db.getSession("s")!.messageCount, 0);
});

Deno.test("appendMessages appends all in order, in one transaction", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  assert.deepEqual(db.appendMessages("s", []), []);
  const out = db.appendMessages("s", [
    { role: "user", content: "a" },
    { role: "assistant", content: "b" },
    { role: "user", content: "c" },
  ]);
  assert.equal(out.length, 3);
  assert.deepEqual(ids(db.getMessages("s")), out);
  assert.deepEqual(db.getMessages("s").map((m) => m.content), ["a", "b", "c"]);
  assert.equal(db.getSession("s")!.messageCount, 3);
  assert.deepEqual(db.checkInvariants(), []);
});

// --- rewind and fork --------------------------------------------------------------

Deno.test("rewindToMessage soft-deletes the target and later rows, with CAS", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const [u0, a1, u2, a3, u4, a5] = append(db, "s", [
    "user",
    "assistant",
    "user",
    "assistant",
    "user",
    "assistant",
  ]) as [number, number, number, number, number, number];
  const seen = ids(db.getMessages("s"));

  // A stale view of the transcript loses the compare-and-swap and changes nothing.
  assert.throws(
    () => db.rewindToMessage("s", u4, { expectedActiveIds: [u0, a1, u2] }),
    RewindConflictError,
  );
  assert.deepEqual(ids(db.getMessages("s")), seen);
  assert.equal(db.getSession("s")!.rewindCount, 0);

  assert.equal(db.rewindToMessage("s", u4, { expectedActiveIds: seen }), 2);
  assert.deepEqual(ids(db.getMessages("s")), [u0, a1, u2, a3]);
  const all = db.getMessages("s", { includeInactive: true });
  assert.deepEqual(ids(all), [u0, a1, u2, a3, u4, a5]);
  assert.deepEqual(all.map((m) => m.active), [true, true, true, true, false, false]);
  const session = db.getSession("s")!;
  assert.equal(session.messageCount, 4);
  assert.equal(session.rewindCount, 1);
  assert.equal(db.messageCount("s"), 4);
  assert.deepEqual(db.checkInvariants(), []);

  // The CAS sees the new active ids; the old view is stale now.
  assert.throws(
    () => db.rewindToMessage("s", u2, { expectedActiveIds: seen }),
    RewindConflictError,
  );
});

Deno.test("rewind targets must be active user messages of the session", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  db.createSession("other");
  const [u0, a1, u2] = append(db, "s", ["user", "assistant", "user"]) as [number, number, number];
  const [o0] = append(db, "other", ["user"]) as [number];
  assert.throws(() => db.rewindToMessage("s", a1), InvalidArgumentError);
  assert.throws(() => db.rewindToMessage("s", a1), /not an active user message/);
  assert.throws(() => db.rewindToMessage("s", o0), InvalidArgumentError);
  assert.throws(() => db.rewindToMessage("s", 999_999), InvalidArgumentError);
  db.rewindToMessage("s", u2);
  assert.throws(() => db.rewindToMessage("s", u2), InvalidArgumentError); // no longer active
  assert.deepEqual(ids(db.getMessages("s")), [u0, a1]);
});

Deno.test("rewind is refused while a live compression lock is held", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const [u0] = append(db, "s", ["user", "assistant"]) as [number];
  assert.ok(db.tryAcquireCompressionLock("s", holder("compressor"), 60_000));
  assert.throws(() => db.rewindToMessage("s", u0), CompressionLockError);
  assert.equal(db.messageCount("s"), 2);
  assert.ok(db.releaseCompressionLock("s", holder("compressor")));
  assert.equal(db.rewindToMessage("s", u0), 2);
});

Deno.test("repeated rewinds and edits never duplicate rows", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const prefix = append(db, "s", ["user", "assistant", "user", "assistant"]);
  let edit = db.appendMessage("s", { role: "user", content: "edit-0" });
  for (let i = 1; i <= 5; i++) {
    const active = ids(db.getMessages("s"));
    assert.equal(db.rewindToMessage("s", edit, { expectedActiveIds: active }), 1);
    edit = db.appendMessage("s", { role: "user", content: `edit-${i}` });
    assert.deepEqual(ids(db.getMessages("s")), [...prefix, edit]);
  }
  const all = db.getMessages("s", { includeInactive: true });
  assert.equal(all.length, prefix.length + 6);
  assert.equal(new Set(ids(all)).size, all.length);
  assert.deepEqual(
    db.getMessages("s").map((m) => m.content),
    ["user0", "assistant1", "user2", "assistant3", "edit-5"],
  );
  assert.equal(db.getSession("s")!.rewindCount, 5);
  assert.equal(db.getSession("s")!.messageCount, 5);
  assert.deepEqual(db.checkInvariants(), []);
});

Deno.test("forkSession copies the active prefix and leaves the parent untouched", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("p", { source: "telegram", title: "parent" });
  const [, , u2, , u4] = append(db, "p", ["user", "assistant", "user", "assistant", "user"]) as [
    number,
    number,
    number,
    number,
    number,
  ];
  db.rewindToMessage("p", u4);
  const edit = db.appendMessage("p", { role: "user", content: "edited" });
  const parentBefore = db.getSession("p");
  const parentRows = db.getMessages("p", { includeInactive: true });

  const early = db.forkSession("p", u2, "branch-early");
  assert.equal(early.parentSessionId, "p");
  assert.equal(early.branchKind, "fork");
  assert.equal(early.source, "telegram");
  assert.equal(early.title, "parent");
  assert.equal(early.messageCount, 3);
  assert.deepEqual(
    db.getMessages("branch-early").map((m) => [m.role, m.content]),
    [["user", "user0"], ["assistant", "assistant1"], ["user", "user2"]],
  );

  const late = db.forkSession("p", edit, "branch-late");
  assert.deepEqual(
    db.getMessages("branch-late").map((m) => m.content),
    ["user0", "assistant1", "user2", "assistant3", "edited"], // the rewound row is not copied
  );
  assert.equal(late.messageCount, 5);
  // Copies are new rows of the branch.
  assert.ok(db.getMessages("branch-late").every((m) => m.sessionId === "branch-late"));
  assert.ok(db.getMessages("branch-late").every((m) => !ids(parentRows).includes(m.id)));

  assert.deepEqual(db.getSession("p"), parentBefore);
  assert.deepEqual(db.getMessages("p", { includeInactive: true }), parentRows);
  assert.deepEqual(db.checkInvariants(), []);

  assert.throws(() => db.forkSession("p", u2, "branch-early"), /already exists/);
  assert.throws(() => db.forkSession("p", u4, "branch-x"), InvalidArgumentError); // rewound row
  assert.throws(() => db.forkSession("p", 999_999, "branch-y"), InvalidArgumentError);
  assert.equal(db.getSession("branch-x"), undefined);
});

// --- handoff ----------------------------------------------------------------------

Deno.test("handoff: request, list, claim once, complete, fail", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  db.createSession("t");
  assert.equal(db.getHandoffState("s"), null);
  assert.equal(db.claimHandoff("s"), false); // nothing parked
  assert.equal(db.requestHandoff("s", "telegram"), true);
  assert.equal(db.requestHandoff("s", "discord"), false); // already pending
  assert.equal(db.getHandoffState("s"), "pending");
  assert.equal(db.getSession("s")!.handoffPlatform, "telegram");
  assert.deepEqual(db.listPendingHandoffs().map((s) => s.id), ["s"]);

  assert.equal(db.completeHandoff("s"), false); // not running yet
  assert.equal(db.claimHandoff("s"), true);
  assert.equal(db.claimHandoff("s"), false); // consumed once
  assert.equal(db.getHandoffState("s"), "running");
  assert.deepEqual(db.listPendingHandoffs(), []);
  assert.equal(db.requestHandoff("s", "telegram"), false); // running
  assert.equal(db.completeHandoff("s"), true);
  assert.equal(db.completeHandoff("s"), false);
  assert.equal(db.getHandoffState("s"), "completed");

  // A completed handoff may be requested again; a pending one may fail.
  assert.equal(db.requestHandoff("s", "discord"), true);
  assert.equal(db.failHandoff("s", "platform unreachable"), true);
  assert.equal(db.failHandoff("s", "again"), false);
  assert.equal(db.getHandoffState("s"), "failed");
  assert.equal(db.getSession("s")!.handoffError, "platform unreachable");
  assert.equal(db.completeHandoff("s"), false);

  // A running one may fail; a new request clears the error.
  assert.equal(db.requestHandoff("s", "telegram"), true);
  assert.equal(db.getSession("s")!.handoffError, null);
  assert.equal(db.claimHandoff("s"), true);
  assert.equal(db.failHandoff("s", "crashed"), true);
  assert.equal(db.getHandoffState("t"), null);
  assert.deepEqual(db.checkInvariants(), []);
});

// --- compression rotation ---------------------------------------------------------

Deno.test("compression lock: a live holder refuses others; refresh and release", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const a = holder("a");
  const b = holder("b");
  assert.ok(db.tryAcquireCompressionLock("s", a, 60_000));
  assert.ok(db.tryAcquireCompressionLock("s", a, 60_000)); // the holder again
  assert.equal(db.tryAcquireCompressionLock("s", b, 60_000), false);
  assert.equal(db.tryAcquireCompressionLock("s", "no-pid-holder", 60_000), false);
  assert.ok(db.refreshCompressionLock("s", a, 60_000));
  assert.equal(db.refreshCompressionLock("s", b, 60_000), false);
  assert.equal(db.releaseCompressionLock("s", b), false);
  assert.ok(db.releaseCompressionLock("s", a));
  assert.equal(db.releaseCompressionLock("s", a), false);
  assert.ok(db.tryAcquireCompressionLock("s", b, 60_000));
});

Deno.test("compression lock: a holder without a pid is live until it expires", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  assert.ok(db.tryAcquireCompressionLock("s", "worker-7", 60_000));
  assert.equal(db.tryAcquireCompressionLock("s", holder("b"), 60_000), false);
  using conn = raw(store.path);
  conn.exec("UPDATE compression_locks SET expires_at = 1 WHERE session_id = 's'");
  assert.ok(db.tryAcquireCompressionLock("s", holder("b"), 60_000));
});

Deno.test("compression lock: a dead holder's lock is taken over", async () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const dead = await deadPid();
  assert.ok(db.tryAcquireCompressionLock("s", holder("crashed", dead), 3_600_000));
  assert.ok(db.tryAcquireCompressionLock("s", holder("b"), 60_000));
  assert.equal(db.tryAcquireCompressionLock("s", holder("crashed", dead), 60_000), false);
});

Deno.test("compression lock: an expired lock of a live holder is taken over", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  assert.ok(db.tryAcquireCompressionLock("s", holder("a"), 3_600_000));
  using conn = raw(store.path);
  conn.exec("UPDATE compression_locks SET expires_at = 1 WHERE session_id = 's'");
  assert.equal(db.refreshCompressionLock("s", holder("a"), 60_000), false); // expired
  assert.ok(db.tryAcquireCompressionLock("s", holder("b"), 60_000));
  assert.equal(db.tryAcquireCompressionLock("s", holder("a"), 60_000), false);
});

Deno.test("publishCompressionChild rotates in one step and the parent refuses writes", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("p", { title: "chat" });
  const [u0] = append(db, "p", ["user", "assistant"]) as [number];
  const h = holder("compressor");
  assert.ok(db.tryAcquireCompressionLock("p", h, 60_000));
  const child = db.publishCompressionChild({
    parentId: "p",
    childId: "p-2",
    holder: h,
    messages: [{ role: "system", content: "summary" }, { role: "user", content: "go on" }],
  });
  assert.equal(child.id, "p-2");
  assert.equal(child.parentSessionId, "p");
  assert.equal(child.branchKind, "continuation");
  assert.equal(child.title, "chat");
  assert.equal(child.messageCount, 2);
  assert.equal(child.endedAt, null);
  assert.deepEqual(db.getMessages("p-2").map((m) => m.content), ["summary", "go on"]);
  const parent = db.getSession("p")!;
  assert.equal(parent.endReason, "compression");
  assert.ok(parent.endedAt !== null);
  assert.equal(db.findLiveCompressionChild("p")?.id, "p-2");
  assert.equal(db.findLiveCompressionChild("p-2"), undefined);
  assert.equal(db.resolveResumeSessionId("p"), "p-2");

  assert.throws(
    () => db.appendMessage("p", { role: "user", content: "late" }),
    (error: unknown) =>
      error instanceof CompressionSessionClosedError && /"p-2"/.test(error.message),
  );
  assert.throws(
    () => db.appendMessages("p", [{ role: "user", content: "late" }]),
    CompressionSessionClosedError,
  );
  assert.throws(() => db.rewindToMessage("p", u0), CompressionSessionClosedError);
  assert.throws(() => db.reopenSession("p"), CompressionSessionClosedError);
  assert.throws(() =>
    db.publishCompressionChild({ // the parent already ended
      parentId: "p",
      childId: "p-3",
      holder: h,
      messages: [],
    }), SessionEndedError);
  assert.equal(db.reopenOrphanedCompressionSession("p"), false); // it has a child
  assert.equal(db.getMessages("p").length, 2);
  assert.ok(db.releaseCompressionLock("p", h));
  assert.deepEqual(db.checkInvariants(), []);
});

Deno.test("publishCompressionChild without the lock, or on an ended parent, changes nothing", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("p");
  append(db, "p", ["user"]);
  const publish = (childId: string, h: string) =>
    db.publishCompressionChild({
      parentId: "p",
      childId,
      holder: h,
      messages: [{ role: "system", content: "summary" }],
    });

  assert.throws(() => publish("c1", holder("a")), CompressionLockError);
  assert.throws(() => publish("c1", holder("a")), /no lock/);
  assert.ok(db.tryAcquireCompressionLock("p", holder("a"), 60_000));
  assert.throws(() => publish("c1", holder("b")), CompressionLockError);
  using conn = raw(store.path);
  conn.exec("UPDATE compression_locks SET expires_at = 1");
  assert.throws(() => publish("c1", holder("a")), CompressionLockError); // expired
  assert.ok(db.tryAcquireCompressionLock("p", holder("a"), 60_000));

  db.createSession("taken");
  assert.throws(() => publish("taken", holder("a")), InvalidArgumentError);
  assert.throws(() => publish("p", holder("a")), InvalidArgumentError);

  db.endSession("p", "user_exit");
  assert.throws(() => publish("c1", holder("a")), SessionEndedError);
  assert.equal(db.getSession("c1"), undefined);
  assert.equal(db.getSession("p")!.endReason, "user_exit");
  assert.equal(db.getSession("taken")!.parentSessionId, null);
  assert.deepEqual(db.checkInvariants(), []);
});

Deno.test("resolveResumeSessionId follows a chain of two rotations", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s0");
  append(db, "s0", ["user"]);
  const rotate = (from: string, to: string) => {
    const h = holder(`rotate-${from}`);
    assert.ok(db.tryAcquireCompressionLock(from, h, 60_000));
    db.publishCompressionChild({
      parentId: from,
      childId: to,
      holder: h,
      messages: [{ role: "system", content: `summary of ${from}` }],
    });
    assert.ok(db.releaseCompressionLock(from, h));
  };
  rotate("s0", "s1");
  rotate("s1", "s2");
  assert.equal(db.resolveResumeSessionId("s0"), "s2");
  assert.equal(db.resolveResumeSessionId("s1"), "s2");
  assert.equal(db.resolveResumeSessionId("s2"), "s2");
  db.appendMessage(db.resolveResumeSessionId("s0"), { role: "user", content: "resumed" });
  assert.equal(db.messageCount("s2"), 2);
  assert.deepEqual(db.checkInvariants(), []);
  // A session ended for another reason resolves to itself.
  db.endSession("s2", "user_exit");
  assert.equal(db.resolveResumeSessionId("s0"), "s2");
});

Deno.test("reopenOrphanedCompressionSession: only with no child and no live lock", async () => {
  using store = scratch();
  const db = store.db;
  using conn = raw(store.path);
  // Legacy orphans: ended by compression with no continuation (raw SQL, as an old store left them).
  conn.exec(`
    INSERT INTO sessions (id, started_at, ended_at, end_reason) VALUES
      ('orphan', 1, 2, 'compression'),
      ('with-child', 1, 2, 'compression'),
      ('locked', 1, 2, 'compression');
    INSERT INTO sessions (id, parent_session_id, branch_kind, started_at)
      VALUES ('fork-of-with-child', 'with-child', 'fork', 3);
  `);
  const problems = db.checkInvariants();
  assert.ok(problems.some((p) => /compression orphan.*orphan/.test(p)), problems.join("\n"));
  assert.throws(
    () => db.appendMessage("orphan", { role: "user", content: "x" }),
    CompressionSessionClosedError,
  );

  db.createSession("open");
  assert.equal(db.reopenOrphanedCompressionSession("open"), false); // not ended by compression
  assert.equal(db.reopenOrphanedCompressionSession("with-child"), false);
  assert.ok(db.tryAcquireCompressionLock("locked", holder("live"), 60_000));
  assert.equal(db.reopenOrphanedCompressionSession("locked"), false);
  assert.equal(db.getSession("locked")!.endReason, "compression");

  // A lock whose holder died no longer protects it.
  const dead = await deadPid();
  conn.exec(
    "UPDATE compression_locks SET holder = ? WHERE session_id = 'locked'",
    holder("x", dead),
  );
  assert.equal(db.reopenOrphanedCompressionSession("locked"), true);
  assert.equal(db.reopenOrphanedCompressionSession("orphan"), true);
  assert.equal(db.reopenOrphanedCompressionSession("orphan"), false);
  assert.equal(db.getSession("orphan")!.endedAt, null);
  db.appendMessage("orphan", { role: "user", content: "back" });
  assert.equal(db.messageCount("orphan"), 1);
});

// --- outbox -----------------------------------------------------------------------

Deno.test("recordObligation is idempotent and derives the id", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const first = db.recordObligation({ sessionId: "s", messageRef: "m1", content: "hello" });
  assert.equal(first.obligationId, obligationId("s", "m1", "hello"));
  assert.equal(first.obligationId.length, 32);
  assert.equal(first.state, "pending");
  assert.equal(first.attempts, 0);
  assert.equal(first.deliveryFence, 0);
  assert.equal(first.ownerPid, Deno.pid);
  assert.equal(first.lastError, null);
  const again = db.recordObligation({ sessionId: "s", messageRef: "m1", content: "hello" });
  assert.deepEqual(again, first);
  const other = db.recordObligation({ sessionId: "s", messageRef: "m1", content: "hello!" });
  assert.notEqual(other.obligationId, first.obligationId);
  assert.equal(db.listObligations().length, 2);
  assert.equal(db.listObligations({ sessionId: "s", state: "pending" }).length, 2);
  assert.deepEqual(db.listObligations({ state: "delivered" }), []);
  assert.deepEqual(db.listObligations({ sessionId: "t" }), []);
  assert.equal(db.getObligation("nope"), undefined);
});

Deno.test("markAttempting is a CAS; markDelivered, markFailed and markUnknown", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const record = (ref: string) =>
    db.recordObligation({ sessionId: "s", messageRef: ref, content: "c" }).obligationId;

  const o1 = record("o1");
  assert.equal(db.markAttempting(o1, 1), null); // wrong fence
  assert.equal(db.markAttempting(o1, 0), 1);
  assert.equal(db.markAttempting(o1, 0), null); // no longer pending
  assert.equal(db.markAttempting(o1, 1), null);
  const attempting = db.getObligation(o1)!;
  assert.equal(attempting.state, "attempting");
  assert.equal(attempting.attempts, 1);
  assert.equal(attempting.deliveryFence, 1);
  assert.equal(db.markDelivered(o1, 0), false); // stale fence
  assert.equal(db.markDelivered(o1, 1), true);
  assert.equal(db.markDelivered(o1, 1), false);
  assert.equal(db.getObligation(o1)!.state, "delivered");
  assert.equal(db.markFailed(o1, 1, "late"), false); // terminal
  assert.equal(db.markUnknown(o1, 1, "late"), false);

  const o2 = record("o2");
  assert.equal(db.markDelivered(o2, 0), false); // never attempted
  assert.equal(db.markFailed(o2, 1, "x"), false);
  assert.equal(db.markFailed(o2, 0, "no route to chat"), true);
  assert.equal(db.getObligation(o2)!.state, "failed");
  assert.equal(db.getObligation(o2)!.lastError, "no route to chat");
  assert.equal(db.markAttempting(o2, 0), null);

  const o3 = record("o3");
  assert.equal(db.markAttempting(o3, 0), 1);
  assert.equal(db.markUnknown(o3, 0, "x"), false);
  assert.equal(db.markUnknown(o3, 1, "send timed out"), true);
  assert.equal(db.getObligation(o3)!.state, "unknown");
  assert.equal(db.getObligation(o3)!.lastError, "send timed out");
  assert.equal(db.markDelivered(o3, 1), false);

  assert.equal(db.markAttempting("no-such-id", 0), null);
  assert.deepEqual(db.checkInvariants(), []);
});

Deno.test("sweepRecoverable takes over a dead owner's obligations only", async () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const record = (ref: string) =>
    db.recordObligation({ sessionId: "s", messageRef: ref, content: "c" }).obligationId;
  const pending = record("pending");
  const attempting = record("attempting");
  db.markAttempting(attempting, 0);
  const delivered = record("delivered");
  db.markDelivered(delivered, db.markAttempting(delivered, 0)!);
  const mine = record("mine");
  const others = record("others");

  const dead = await deadPid();
  // Another live process (it waits for its stdin to close).
  const live = new Deno.Command("cat", { stdin: "piped", stdout: "null", stderr: "null" })
    .spawn();
  let taken: ReturnType<SessionDB["sweepRecoverable"]>;
  let untouched: unknown[];
  using conn = raw(store.path);
  try {
    conn.exec(
      "UPDATE outbox SET owner_pid = ? WHERE obligation_id IN (?, ?, ?)",
      dead,
      pending,
      attempting,
      delivered,
    );
    conn.exec("UPDATE outbox SET owner_pid = ? WHERE obligation_id = ?", live.pid, others);
    untouched = [mine, others, delivered].map((id) => db.getObligation(id));
    taken = db.sweepRecoverable();
    assert.deepEqual(db.sweepRecoverable(), []); // nothing left to take while it lives
  } finally {
    await live.stdin.close();
    await live.status;
  }
  assert.deepEqual(
    taken.map((t) => [t.obligation.obligationId, t.action, t.idempotencyKey]).sort(),
    [[pending, "send", pending], [attempting, "unknown", attempting]].sort(),
  );
  const sent = db.getObligation(pending)!;
  assert.equal(sent.state, "pending");
  assert.equal(sent.ownerPid, Deno.pid);
  const unknown = db.getObligation(attempting)!;
  assert.equal(unknown.state, "unknown");
  assert.equal(unknown.ownerPid, Deno.pid);
  assert.match(unknown.lastError ?? "", new RegExp(`pid ${dead}`));
  assert.deepEqual([mine, others, delivered].map((id) => db.getObligation(id)), untouched);
  // Once the other owner is gone, its obligation is taken too.
  assert.deepEqual(
    db.sweepRecoverable().map((t) => [t.obligation.obligationId, t.action]),
    [[others, "send"]],
  );
  assert.deepEqual(db.sweepRecoverable(), []);
  // The taken pending obligation is sent by the new owner.
  assert.equal(db.markDelivered(pending, db.markAttempting(pending, sent.deliveryFence)!), true);
  assert.deepEqual(db.checkInvariants(), []);
});

Deno.test("sweepRecoverable resends an attempting obligation with an idempotent transport", async () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  const id = db.recordObligation({ sessionId: "s", messageRef: "m", content: "c" }).obligationId;
  assert.equal(db.markAttempting(id, 0), 1);
  const dead = await deadPid();
  using conn = raw(store.path);
  conn.exec("UPDATE outbox SET owner_pid = ? WHERE obligation_id = ?", dead, id);

  const [taken, ...rest] = db.sweepRecoverable({ idempotentTransport: true });
  assert.deepEqual(rest, []);
  assert.ok(taken);
  assert.equal(taken.action, "resend");
  assert.equal(taken.idempotencyKey, id);
  assert.equal(taken.obligation.state, "attempting");
  assert.equal(taken.obligation.deliveryFence, 2);
  assert.equal(taken.obligation.attempts, 2);
  assert.equal(taken.obligation.ownerPid, Deno.pid);
  assert.equal(db.markDelivered(id, 1), false); // the dead owner's fence is stale
  assert.equal(db.markDelivered(id, 2), true);
});

// --- invariants -------------------------------------------------------------------

Deno.test("checkInvariants is empty when healthy and reports broken counters and orphans", () => {
  using store = scratch();
  const db = store.db;
  db.createSession("s");
  append(db, "s", ["user", "assistant"]);
  assert.deepEqual(db.checkInvariants(), []);
  using conn = raw(store.path);
  conn.exec("UPDATE sessions SET message_count = 7 WHERE id = 's'");
  conn.exec(
    "INSERT INTO sessions (id, started_at, ended_at, end_reason) VALUES ('lost', 1, 2, 'compression')",
  );
  const problems = db.checkInvariants();
  assert.equal(problems.length, 2, problems.join("\n"));
  assert.match(problems[0]!, /message_count differs from active rows: s \(7 vs 2\)/);
  assert.match(problems[1]!, /compression orphan.*: lost/);
});

// --- crash points -----------------------------------------------------------------

Deno.test("every crash point the store marks is declared, and every declared one is marked", () => {
  // The store's sources: the class and the private files of its feature areas.
  const source = [...Deno.readDirSync(new URL(".", import.meta.url))]
    .filter(({ name }) => name === "session_db.ts" || /^_.*(?<!_test)\.ts$/.test(name))
    .map(({ name }) => Deno.readTextFileSync(new URL(name, import.meta.url)))
    .join("\n");
  const marked = [...source.matchAll(/crashPoint\("([^"]+)"\)/g)].map((m) => m[1]!);
  assert.deepEqual([...new Set(marked)].sort(), [...STORE_CRASH_POINTS].sort());
  for (const point of STORE_CRASH_POINTS) assert.ok(crashPoints().includes(point));
});

Deno.test("an unknown or malformed SESSION_DB_CRASH_AT is a CrashPointError at open", async () => {
  using dir = tempDir();
  const path = join(dir.path, "s.db");
  for (const spec of ["appendMessage:noSuch", "appendMessage", "appendMessage:afterInsert@0"]) {
    const child = await runDeno(OPEN_STORE, [path], { env: { SESSION_DB_CRASH_AT: spec } });
    assert.ok(child.success, child.stderr);
    const [result] = JSON.parse(child.stdout).results;
    assert.equal(result.error, "CrashPointError", `${spec}: ${child.stdout}`);
    assert.match(result.message, /SESSION_DB_CRASH_AT/);
  }
});

// A cell's child owns points of its own (sender:afterSend); a store whose copy of this
// module is not the child's (a store in a worker) must open under them, unarmed.
Deno.test("a SESSION_DB_CRASH_AT point of an operation the store lacks is not its business", async () => {
  using dir = tempDir();
  const path = join(dir.path, "s.db");
  const child = await runDeno(OPEN_STORE, [path], {
    env: { SESSION_DB_CRASH_AT: "sender:afterSend" },
  });
  assert.ok(child.success, child.stderr);
  const [result] = JSON.parse(child.stdout).results;
  assert.equal(result.error, undefined, child.stdout);
});

Deno.test("a crash point SIGKILLs the process and the acknowledged prefix survives", async () => {
  using dir = tempDir();
  const path = join(dir.path, "crash.db");
  const lib = sqliteLibraryPath();
  const mode = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  const child = await runDeno(APPEND_MESSAGES, [path, "5"], {
    // The scoped permissions of the harness's children: FFI of the SQLite library only.
    flags: [
      "--allow-read",
      "--allow-write",
      "--allow-env",
      lib.includes("/") ? `--allow-ffi=${lib}` : "--allow-ffi",
    ],
    env: {
      SESSION_DB_CRASH_AT: "appendMessage:afterInsert@3",
      ...(mode ? { SESSION_DB_JOURNAL_MODE: mode } : {}),
    },
  });
  assert.equal(child.signal, "SIGKILL", `code ${child.code}: ${child.stderr}`);
  const acknowledged = child.stdout.trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(acknowledged.map((a) => a.i), [0, 1]);

  for (let pass = 0; pass < 2; pass++) {
    const db = SessionDB.open(path);
    try {
      const messages = db.getMessages("s", { includeInactive: true });
      assert.deepEqual(messages.map((m) => m.content), ["m0", "m1"]);
      assert.deepEqual(ids(messages), acknowledged.map((a) => a.id));
      assert.equal(db.getSession("s")!.messageCount, 2);
      assert.deepEqual(db.checkInvariants(), []);
    } finally {
      db.close();
    }
  }
});
