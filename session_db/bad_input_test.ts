// Bad input: each error names the problem and the fix, and nothing acknowledged before
// it is lost. docs/bad_input.md points here and at the older tests it
// reuses (session_db_test.ts, journal_mode_test.ts, sqlite/database_test.ts).
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  BusyDeadlineError,
  InvalidArgumentError,
  SessionDB,
  SessionDBCorruptError,
  SessionDBOpenError,
  SessionDBStorageError,
} from "./mod.ts";
import { cleanEnv, runDeno, tempDir, waitForFile } from "./_test_helpers.ts";
import { runCommand } from "../internal/command.ts";
import { libcPath } from "../harness/_libc.ts";
import { fromFileUrl } from "../internal/path.ts";

const OPEN_STORE = new URL("./testdata/open_store.ts", import.meta.url);
const APPEND_MESSAGES = new URL("./testdata/append_messages.ts", import.meta.url);
const HOLD_LOCK = new URL("./testdata/hold_store_lock.ts", import.meta.url);
const LOAD_LIBRARY = new URL("./sqlite/testdata/load_library.ts", import.meta.url);

type Acked = { id: number; content: string | null }[];

/** A database at `path` with session `s` and three acknowledged appends. */
function acknowledge(path: string): Acked {
  const db = SessionDB.open(path);
  try {
    db.createSession("s");
    return ["m0", "m1", "m2"].map((content) => ({
      id: db.appendMessage("s", { role: "user", content }),
      content,
    }));
  } finally {
    db.close();
  }
}

/** Reopens the file in a fresh store: every acknowledged append is there, unchanged. */
function assertIntact(path: string, acked: Acked): void {
  const db = SessionDB.open(path);
  try {
    const rows = db.getMessages("s").map(({ id, content }) => ({ id, content }));
    assert.deepEqual(rows.slice(0, acked.length), acked, "an acknowledged append was lost");
    assert.deepEqual(db.checkInvariants(), []);
  } finally {
    db.close();
  }
}

/**
 * Acknowledges three appends in `dir/name`, runs `use` on a store opened there (closed
 * after), and asserts the acknowledged appends intact. Returns the file.
 */
function afterAcknowledged(dir: string, name: string, use: (db: SessionDB) => void): string {
  const path = join(dir, name);
  const acked = acknowledge(path);
  const db = SessionDB.open(path);
  try {
    use(db);
  } finally {
    db.close();
  }
  assertIntact(path, acked);
  return path;
}

function throwsWith(fn: () => unknown, type: abstract new (...args: never[]) => Error): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof type, `expected ${type.name}, got ${error}`);
    return error.message;
  }
  assert.fail(`expected ${type.name}, nothing was thrown`);
}

// --- the SQLite library ---------------------------------------------------------------

/**
 * A shared library that is not SQLite: the C library, else one this process has mapped
 * (reading `/proc/self/maps` needs every permission), else undefined.
 */
function nonSqliteLibrary(): string | undefined {
  const c = libcPath();
  if (c) return c;
  try {
    const maps = Deno.readTextFileSync("/proc/self/maps");
    return [...new Set(maps.split("\n").map((line) => line.split(/\s+/)[5] ?? ""))]
      .find((path) => /\/lib[^/]*\.so[.\d]*$/.test(path) && !/sqlite/i.test(path));
  } catch {
    return undefined;
  }
}

Deno.test("DENO_SQLITE_PATH: a missing file, a directory, a non-library file", async () => {
  using dir = tempDir();
  const text = join(dir.path, "libnotes.so");
  Deno.writeTextFileSync(text, "not a library\n");
  const cases: [string, RegExp][] = [
    [join(dir.path, "missing", "libsqlite3.so"), /libsqlite3\.so does not exist/],
    [dir.path, /is a directory, not a library file/],
    [text, /libnotes\.so is not a loadable shared library/],
  ];
  for (const [path, problem] of cases) {
    const child = await runDeno(LOAD_LIBRARY, [], { env: { DENO_SQLITE_PATH: path } });
    assert.equal(child.code, 1, child.stderr);
    assert.match(child.stderr, /^SqliteLibraryError: Cannot load SQLite library/);
    assert.match(child.stderr, problem);
    assert.match(child.stderr, /point DENO_SQLITE_PATH to a readable SQLite shared library/);
    assert.match(child.stderr, /or unset it to use the system libsqlite3/);
  }
});

const otherLibrary = nonSqliteLibrary();
Deno.test({
  name: `DENO_SQLITE_PATH to a library that is not SQLite${
    otherLibrary ? "" : " SKIP: no C library found, and /proc/self/maps unreadable"
  }`,
  ignore: !otherLibrary,
  async fn() {
    const child = await runDeno(LOAD_LIBRARY, [], { env: { DENO_SQLITE_PATH: otherLibrary! } });
    assert.equal(child.code, 1, child.stderr);
    assert.ok(
      child.stderr.includes(
        `${otherLibrary} is not a SQLite library: it lacks the symbol sqlite3_`,
      ),
      child.stderr,
    );
    assert.match(child.stderr, /point DENO_SQLITE_PATH to a readable SQLite shared library/);
  },
});

// --- the database path and file ----------------------------------------------------------

Deno.test("a database path under a file is a SessionDBOpenError naming it", () => {
  using dir = tempDir();
  const file = join(dir.path, "plain.txt");
  Deno.writeTextFileSync(file, "a file, not a folder\n");
  const message = throwsWith(() => SessionDB.open(join(file, "s.db")), SessionDBOpenError);
  assert.ok(message.includes(`"${file}" is not a directory`), message);
  assert.match(message, /choose a path inside an existing folder/);
  assert.equal(Deno.readTextFileSync(file), "a file, not a folder\n");
});

/**
 * Runs a store child in a folder it may not write. Root ignores permission bits, so as
 * root the child runs without capabilities (setpriv), which makes root obey them.
 */
async function inReadOnlyFolder(
  folder: string,
  script: URL,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  Deno.chmodSync(folder, 0o500);
  try {
    const deno = [Deno.execPath(), "run", "--no-lock", "-A", fromFileUrl(script), ...args];
    const [command, ...rest] = Deno.uid() === 0
      ? ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--", ...deno]
      : deno;
    const { code, stdout, stderr } = await runCommand(command!, {
      args: rest,
      clearEnv: true,
      // The leg of this process, so that the child resolves the same journal mode.
      env: cleanEnv(legEnv()),
    });
    return { code, stdout, stderr };
  } finally {
    Deno.chmodSync(folder, 0o700);
  }
}

function legEnv(): Record<string, string> {
  const mode = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  return mode ? { SESSION_DB_JOURNAL_MODE: mode } : {};
}

function hasSetpriv(): boolean {
  try {
    return new Deno.Command("setpriv", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const readOnlySkip = Deno.build.os === "windows"
  ? "permission bits do not apply on Windows"
  : Deno.uid() === 0 && !hasSetpriv()
  ? "running as root without setpriv to drop the capabilities that ignore permission bits"
  : undefined;

Deno.test({
  name:
    `a read-only folder: a new database is refused, an existing one refuses writes and keeps its rows${
      readOnlySkip ? ` SKIP: ${readOnlySkip}` : ""
    }`,
  ignore: readOnlySkip !== undefined,
  async fn() {
    using dir = tempDir();
    const folder = join(dir.path, "ro");
    Deno.mkdirSync(folder);
    const fresh = join(folder, "new.db");
    const opened = await inReadOnlyFolder(folder, OPEN_STORE, [fresh]);
    assert.equal(opened.code, 0, opened.stderr);
    const [result] = JSON.parse(opened.stdout).results;
    assert.equal(result.error, "SessionDBOpenError", opened.stdout);
    assert.ok(result.message.includes(`the folder "${folder}" is not writable`), result.message);
    assert.match(result.message, /choose a writable location/);

    // Default leg: DELETE mode needs a journal file beside the database for every write.
    const existing = join(folder, "old.db");
    const acked = acknowledge(existing);
    const probe = SessionDB.open(existing);
    const mode = probe.journalMode;
    probe.close();
    const appended = await inReadOnlyFolder(folder, APPEND_MESSAGES, [existing, "1"]);
    assert.equal(appended.code, 1, appended.stdout);
    if (mode === "delete") {
      assert.match(appended.stderr, /^SessionDBStorageError: Cannot appendMessage on session/);
    } else {
      // WAL needs its -shm file at open: refused there instead.
      assert.match(appended.stderr, /^SessionDBOpenError: Cannot open session database/);
    }
    assert.match(
      appended.stderr,
      /read-only: make both writable, or open with \{ readonly: true \}/,
    );
    assert.equal(appended.stdout, "", "a write was acknowledged in a read-only folder");
    assertIntact(existing, acked);
  },
});

Deno.test("a truncated database is a SessionDBOpenError and is left as it was", () => {
  using dir = tempDir();
  const path = join(dir.path, "truncated.db");
  const db = SessionDB.open(path, { journalMode: "delete" });
  db.createSession("s");
  for (let i = 0; i < 200; i++) {
    db.appendMessage("s", { role: "user", content: `m${i} ${"x".repeat(200)}` });
  }
  db.close();
  const size = Deno.statSync(path).size;
  assert.ok(size > 16 * 4096, `only ${size} bytes`);
  // Mid-page, well past the first page: the header still says the old page count.
  Deno.truncateSync(path, Math.floor(size / 2) + 100);
  const before = Deno.readFileSync(path);
  const message = throwsWith(() => SessionDB.open(path), SessionDBOpenError);
  assert.ok(message.startsWith(`Cannot open session database "${path}": `), message);
  assert.match(message, /database disk image is malformed/);
  assert.match(message, /restore it from a backup/);
  assert.deepEqual(Deno.readFileSync(path), before, "the failed open changed the file");
});

// --- arguments -------------------------------------------------------------------------

Deno.test("invalid session ids and roles are InvalidArgumentError; acknowledged rows intact", () => {
  using dir = tempDir();
  const path = afterAcknowledged(dir.path, "args.db", (db) => {
    const cases: [() => unknown, RegExp][] = [
      [() => db.appendMessage("", { role: "user", content: "x" }), /non-empty string/],
      [() => db.createSession("x".repeat(257)), /257 characters is over the limit of 256/],
      [
        // deno-lint-ignore no-explicit-any
        () => db.appendMessage("s", { role: "robot" as any, content: "x" }),
        /Invalid message role "robot": use one of system, user, assistant, tool/,
      ],
    ];
    for (const [call, problem] of cases) {
      assert.match(throwsWith(call, InvalidArgumentError), problem);
    }
  });
  const check = SessionDB.open(path, { readonly: true });
  assert.deepEqual(check.listSessions().map((session) => session.id), ["s"]);
  check.close();
});

Deno.test("content with NUL characters and 10 MB round-trips exactly", () => {
  using dir = tempDir();
  const path = join(dir.path, "content.db");
  const acked = acknowledge(path);
  const nul = "\0leading, in\0side\0\0, trailing\0";
  // 10 MiB of UTF-16 code units, mixing 1-, 2-, 3- and 4-byte UTF-8 characters.
  const unit = "aé€𝄞";
  const big = unit.repeat(Math.ceil((10 * 1024 * 1024) / unit.length)).slice(
    0,
    10 * 1024 * 1024,
  );
  assert.ok(big.isWellFormed(), "the slice split a surrogate pair");
  const db = SessionDB.open(path);
  const ids: number[] = [];
  try {
    ids.push(db.appendMessage("s", { role: "user", content: nul, toolName: "t\0n" }));
    ids.push(db.appendMessage("s", { role: "assistant", content: big }));
  } finally {
    db.close();
  }
  const again = SessionDB.open(path);
  try {
    const rows = again.getMessages("s");
    const byId = new Map(rows.map((row) => [row.id, row]));
    assert.equal(byId.get(ids[0]!)?.content, nul);
    assert.equal(byId.get(ids[0]!)?.toolName, "t\0n");
    const stored = byId.get(ids[1]!)?.content;
    assert.equal(stored?.length, big.length);
    assert.ok(stored === big, "the 10 MB content changed on the way through");
  } finally {
    again.close();
  }
  assertIntact(path, acked);
});

Deno.test("lone surrogates are InvalidArgumentError, never silently replaced", () => {
  using dir = tempDir();
  afterAcknowledged(dir.path, "surrogates.db", (db) => {
    const high = "before \uD800 after";
    const low = "\uDC00";
    const cases: [() => unknown, RegExp][] = [
      [
        () => db.appendMessage("s", { role: "user", content: high }),
        /Invalid message content: it contains a lone surrogate \(U\+D800 at index 7\)/,
      ],
      [
        () => db.appendMessage("s", { role: "tool", content: "ok", toolCallId: low }),
        /Invalid tool call id: .*U\+DC00 at index 0/,
      ],
      [
        () =>
          db.appendMessages("s", [{ role: "user", content: "fine" }, {
            role: "user",
            content: low,
          }]),
        /Invalid message content/,
      ],
      [() => db.createSession(`s${low}`), /Invalid session id: .*lone surrogate/],
      [
        () => db.recordObligation({ sessionId: "s", messageRef: "m", content: high }),
        /Invalid obligation content/,
      ],
    ];
    for (const [call, problem] of cases) {
      const message = throwsWith(call, InvalidArgumentError);
      assert.match(message, problem);
      assert.match(message, /UTF-8 cannot store \(repair the string, e\.g\. with toWellFormed\(\)/);
    }
    // A well-formed pair is fine.
    db.appendMessage("s", { role: "user", content: "𝄞" });
    assert.deepEqual(db.getMessages("s").map((m) => m.content), ["m0", "m1", "m2", "𝄞"]);
    assert.deepEqual(db.listObligations(), []);
  });
});

Deno.test("SQL-looking content, ids and titles are stored verbatim", () => {
  using dir = tempDir();
  const path = join(dir.path, "sql.db");
  const acked = acknowledge(path);
  const sql = "'); DROP TABLE messages; --";
  const id = `x"; DELETE FROM sessions; --`;
  const db = SessionDB.open(path);
  try {
    db.createSession(id, { title: "' OR '1'='1" });
    db.appendMessage(id, { role: "user", content: sql });
    db.appendMessage("s", { role: "user", content: "SELECT * FROM sessions; /* ? :x $y @z */" });
  } finally {
    db.close();
  }
  const again = SessionDB.open(path);
  try {
    assert.equal(again.getSession(id)?.title, "' OR '1'='1");
    assert.deepEqual(again.getMessages(id).map((m) => m.content), [sql]);
    assert.equal(
      again.getMessages("s").at(-1)?.content,
      "SELECT * FROM sessions; /* ? :x $y @z */",
    );
    assert.equal(again.listSessions().length, 2);
  } finally {
    again.close();
  }
  assertIntact(path, acked);
});

// --- locks -----------------------------------------------------------------------------

/**
 * Another process holding `path`'s lock (testdata/hold_store_lock.ts), ready: it lets go
 * once `release` exists (after the milliseconds written in it, if any).
 */
async function holdLock(dir: string, path: string, kind: "immediate" | "exclusive") {
  const ready = join(dir, "ready");
  const release = join(dir, "release");
  const exited = new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "-A", fromFileUrl(HOLD_LOCK), path, ready, release, kind],
    clearEnv: true,
    env: cleanEnv(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn().output();
  await waitForFile(ready, { exited, deadlineMs: 30_000 });
  return { release, exited };
}

Deno.test("an exclusive lock held past one busy timeout: open and reads wait for it, then a BusyDeadlineError", async () => {
  using dir = tempDir();
  const path = join(dir.path, "exclusive.db");
  const db = SessionDB.open(path, {
    journalMode: "delete",
    busyTimeoutMs: 20,
    busyDeadlineMs: 150,
  });
  db.createSession("s");
  db.appendMessage("s", { role: "user", content: "m0" });
  const { release, exited } = await holdLock(dir.path, path, "exclusive");
  try {
    // A rollback journal's EXCLUSIVE lock keeps readers out: typed, named, after the deadline.
    const read = throwsWith(() => db.getMessages("s"), BusyDeadlineError);
    assert.match(
      read,
      /^Cannot read messages on session database ".*": the database stayed locked/,
    );
    const open = throwsWith(
      () => SessionDB.open(path, { journalMode: "delete", busyTimeoutMs: 20, busyDeadlineMs: 150 }),
      BusyDeadlineError,
    );
    assert.match(open, /^Cannot open session database ".*": the database stayed locked for \d+ ms/);
    // Released 250 ms into an open that retries past each 20 ms busy timeout: it opens.
    Deno.writeTextFileSync(`${release}.tmp`, "250");
    Deno.renameSync(`${release}.tmp`, release);
    const started = performance.now();
    const later = SessionDB.open(path, { busyTimeoutMs: 20 });
    assert.ok(performance.now() - started < 10_000, "the open waited for the holder's own limit");
    try {
      assert.deepEqual(later.getMessages("s").map((m) => m.content), ["m0"]);
    } finally {
      later.close();
    }
  } finally {
    db.close();
    Deno.writeTextFileSync(release, "");
    await exited;
  }
});

Deno.test("another process holding the write lock past the deadline is a BusyDeadlineError", async () => {
  using dir = tempDir();
  const path = join(dir.path, "busy.db");
  const acked = acknowledge(path);
  const { release, exited } = await holdLock(dir.path, path, "immediate");
  try {
    const db = SessionDB.open(path, { busyTimeoutMs: 0, busyDeadlineMs: 150 });
    try {
      const started = performance.now();
      const message = throwsWith(
        () => db.appendMessage("s", { role: "user", content: "while locked" }),
        BusyDeadlineError,
      );
      assert.ok(performance.now() - started < 5000, "the retry ignored its deadline");
      assert.match(message, /^Cannot appendMessage on session database "/);
      assert.match(message, /stayed locked for \d+ ms \(\d+ attempts, deadline 150 ms\)/);
      assert.match(message, /raise busyDeadlineMs/);
      // Reads still work under another's write lock, and see every acknowledged row.
      assert.deepEqual(db.getMessages("s").map((m) => m.content), ["m0", "m1", "m2"]);
      Deno.writeTextFileSync(release, "");
      const status = await exited;
      assert.ok(status.success, new TextDecoder().decode(status.stderr));
      db.appendMessage("s", { role: "user", content: "after release" });
    } finally {
      db.close();
    }
  } finally {
    Deno.writeTextFileSync(release, "");
    await exited;
  }
  assertIntact(path, acked);
  const db = SessionDB.open(path);
  assert.deepEqual(db.getMessages("s").map((m) => m.content), ["m0", "m1", "m2", "after release"]);
  db.close();
});

Deno.test("a page corrupted mid-file fails reads with SessionDBStorageError naming the fix", () => {
  using dir = tempDir();
  const path = join(dir.path, "corrupt.db");
  const db = SessionDB.open(path, { journalMode: "delete" });
  db.createSession("s");
  db.appendMessages(
    "s",
    Array.from({ length: 400 }, (_, i) => ({
      role: "user" as const,
      content: `message ${i} ${"x".repeat(200)}`,
    })),
  );
  db.close();
  // Overwrite the last pages (message rows), leaving the schema page intact.
  const bytes = Deno.readFileSync(path);
  const pageSize = (bytes[16]! << 8) | bytes[17]!;
  bytes.fill(0xa5, bytes.length - 3 * pageSize, bytes.length - pageSize);
  Deno.writeFileSync(path, bytes);
  const reopened = SessionDB.open(path);
  try {
    assert.throws(
      () => reopened.getMessages("s"),
      (error: unknown) =>
        error instanceof SessionDBStorageError && /read messages/.test(error.message) &&
        /restore it from a backup/.test(error.message),
    );
    // Met once, the damage refuses every later write: an append beside a damaged page may
    // never be read back, so it is never acknowledged.
    assert.throws(
      () => reopened.appendMessage("s", { role: "user", content: "after the damage" }),
      (error: unknown) =>
        error instanceof SessionDBCorruptError && /found the file corrupt/.test(error.message),
    );
    assert.throws(() => reopened.createSession("t"), SessionDBCorruptError);
  } finally {
    reopened.close();
  }
});
