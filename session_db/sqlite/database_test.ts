import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Database, SqliteError, sqliteLibraryPath, sqliteVersion } from "./mod.ts";
import { runDeno, tempDir, waitForFile } from "../_test_helpers.ts";
import { exists as fileExists } from "../../internal/fs.ts";
import { fromFileUrl } from "../../internal/path.ts";

const SQLITE_ERROR = 1;
const SQLITE_BUSY = 5;
const SQLITE_READONLY = 8;
const SQLITE_CANTOPEN = 14;
const SQLITE_CONSTRAINT = 19;
const SQLITE_MISUSE = 21;
const SQLITE_RANGE = 25;

function memory(): Database {
  return new Database(":memory:");
}

/** Binds `value` through `SELECT ?` and returns what comes back, with its SQL type. */
function roundTrip(db: Database, value: unknown): { value: unknown; type: string } {
  const row = db.prepare("SELECT ? AS value, typeof(?1) AS type").get<
    { value: unknown; type: string }
  >(
    // deno-lint-ignore no-explicit-any
    value as any,
  );
  assert.ok(row);
  return row;
}

function assertSqliteError(fn: () => unknown, code: number, message?: RegExp): SqliteError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof SqliteError, `expected SqliteError, got ${caught}`);
  assert.equal(caught.code, code, `code of: ${caught.message}`);
  assert.equal(caught.extendedCode & 0xff, code);
  if (message) assert.match(caught.message, message);
  return caught;
}

Deno.test("Database creates a file, reopens it, and opens it read-only", () => {
  using dir = tempDir();
  const path = join(dir.path, "a.db");
  const db = new Database(path);
  assert.equal(db.path, path);
  assert.ok(db.open);
  db.exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x')");
  db.close();
  assert.ok(fileExists(path));

  const again = new Database(path, { create: false });
  assert.deepEqual(again.prepare("SELECT v FROM t").values(), [["x"]]);
  again.close();

  const ro = new Database(path, { readonly: true });
  assert.deepEqual(ro.prepare("SELECT v FROM t").values(), [["x"]]);
  assertSqliteError(() => ro.exec("INSERT INTO t VALUES ('y')"), SQLITE_READONLY);
  assertSqliteError(() => ro.prepare("DELETE FROM t").run(), SQLITE_READONLY);
  ro.close();
});

Deno.test("Database without create, or read-only, fails on a missing file", () => {
  using dir = tempDir();
  const path = join(dir.path, "missing.db");
  assertSqliteError(() => new Database(path, { create: false }), SQLITE_CANTOPEN, /missing\.db/);
  assertSqliteError(() => new Database(path, { readonly: true }), SQLITE_CANTOPEN);
  assert.ok(!fileExists(path));
});

Deno.test("Database accepts a file URL, including characters that URLs escape", () => {
  using dir = tempDir();
  const path = join(dir.path, "with space%.db");
  const db = new Database(pathToFileURL(path));
  assert.equal(db.path, path);
  db.exec("CREATE TABLE t (x)");
  db.close();
  assert.ok(fileExists(path));
});

Deno.test("Database memory option ignores the path", () => {
  using dir = tempDir();
  const path = join(dir.path, "never.db");
  const db = new Database(path, { memory: true });
  db.exec("CREATE TABLE t (x)");
  db.close();
  assert.ok(!fileExists(path));
});

Deno.test("exec runs every statement of a multi-statement text", () => {
  using db = memory();
  const changed = db.exec(`
    CREATE TABLE t (a INTEGER);
    INSERT INTO t VALUES (1);
    INSERT INTO t VALUES (2), (3);
  `);
  assert.equal(changed, 2);
  assert.deepEqual(db.prepare("SELECT a FROM t ORDER BY a").values(), [[1], [2], [3]]);
  assert.equal(db.exec("INSERT INTO t VALUES (?)", 4), 1);
  assert.equal(db.exec("UPDATE t SET a = a + :d WHERE a > :min", { d: 10, min: 2 }), 2);
  assert.deepEqual(db.prepare("SELECT a FROM t ORDER BY a").values(), [[1], [2], [13], [14]]);
});

Deno.test("binds and returns each value type", () => {
  using db = memory();
  assert.deepEqual(roundTrip(db, "héllo ✓"), { value: "héllo ✓", type: "text" });
  assert.deepEqual(roundTrip(db, 42), { value: 42, type: "integer" });
  assert.deepEqual(roundTrip(db, -7), { value: -7, type: "integer" });
  assert.deepEqual(roundTrip(db, 1.5), { value: 1.5, type: "real" });
  assert.deepEqual(roundTrip(db, -0.25), { value: -0.25, type: "real" });
  assert.deepEqual(roundTrip(db, 5n), { value: 5, type: "integer" });
  assert.deepEqual(roundTrip(db, true), { value: 1, type: "integer" });
  assert.deepEqual(roundTrip(db, false), { value: 0, type: "integer" });
  assert.deepEqual(roundTrip(db, null), { value: null, type: "null" });
  assert.deepEqual(roundTrip(db, undefined), { value: null, type: "null" });
  const date = new Date("2024-05-06T07:08:09.010Z");
  assert.deepEqual(roundTrip(db, date), { value: "2024-05-06T07:08:09.010Z", type: "text" });
  const bytes = new Uint8Array([0, 1, 2, 255, 0]);
  const blob = roundTrip(db, bytes);
  assert.equal(blob.type, "blob");
  assert.ok(blob.value instanceof Uint8Array);
  assert.deepEqual([...blob.value], [0, 1, 2, 255, 0]);
});

Deno.test("text keeps NUL characters, and the empty string stays text", () => {
  using db = memory();
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v)");
  const insert = db.prepare("INSERT INTO t (id, v) VALUES (?, ?)");
  insert.run(1, "a\0b\0");
  insert.run(2, "");
  assert.deepEqual(db.prepare("SELECT v FROM t WHERE id = 1").value(), ["a\0b\0"]);
  assert.deepEqual(db.prepare("SELECT v, typeof(v), v IS NULL FROM t WHERE id = 2").value(), [
    "",
    "text",
    0,
  ]);
  assert.deepEqual(roundTrip(db, ""), { value: "", type: "text" });
});

Deno.test("blobs round-trip, including the empty blob", () => {
  using db = memory();
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)");
  const big = new Uint8Array(100_000).map((_, i) => i % 251);
  db.prepare("INSERT INTO t VALUES (?, ?)").run(1, big);
  db.prepare("INSERT INTO t VALUES (?, ?)").run(2, new Uint8Array(0));
  const [back] = db.prepare("SELECT b FROM t WHERE id = 1").value<[Uint8Array]>()!;
  assert.deepEqual(back, big);
  const empty = db.prepare("SELECT b, typeof(b), length(b) FROM t WHERE id = 2").value();
  assert.ok(empty);
  assert.ok(empty[0] instanceof Uint8Array);
  assert.equal((empty[0] as Uint8Array).length, 0);
  assert.deepEqual(empty.slice(1), ["blob", 0]);
});

Deno.test("64-bit integers are exact: above 2^53 as bigint, within it as number", () => {
  using db = memory();
  const big = 2n ** 62n + 12345n;
  assert.deepEqual(roundTrip(db, big), { value: big, type: "integer" });
  assert.deepEqual(roundTrip(db, -(2n ** 63n)), { value: -(2n ** 63n), type: "integer" });
  assert.deepEqual(roundTrip(db, 2n ** 63n - 1n), { value: 2n ** 63n - 1n, type: "integer" });
  assert.deepEqual(roundTrip(db, 2n ** 53n), { value: 2n ** 53n, type: "integer" });
  assert.deepEqual(roundTrip(db, 2n ** 53n - 1n), { value: 2 ** 53 - 1, type: "integer" });
  assert.deepEqual(roundTrip(db, Number.MAX_SAFE_INTEGER), {
    value: Number.MAX_SAFE_INTEGER,
    type: "integer",
  });
  assert.throws(() => roundTrip(db, 2n ** 63n), RangeError);
  assert.deepEqual(db.prepare("SELECT 9223372036854775807").value(), [9223372036854775807n]);
});

Deno.test("rowids above 2^31 and above 2^53 round-trip through lastInsertRowId", () => {
  using db = memory();
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)");
  const above31 = 2 ** 31 + 5;
  db.prepare("INSERT INTO t (id, v) VALUES (?, 'a')").run(above31);
  assert.equal(db.lastInsertRowId, above31);
  db.prepare("INSERT INTO t (v) VALUES ('b')").run();
  assert.equal(db.lastInsertRowId, above31 + 1);
  assert.deepEqual(db.prepare("SELECT id FROM t WHERE v = 'b'").value(), [above31 + 1]);

  const above53 = 2n ** 53n + 3n;
  db.prepare("INSERT INTO t (id, v) VALUES (?, 'c')").run(above53);
  assert.equal(db.lastInsertRowId, above53);
  db.prepare("INSERT INTO t (v) VALUES ('d')").run();
  assert.equal(db.lastInsertRowId, above53 + 1n);
  assert.deepEqual(db.prepare("SELECT id FROM t WHERE v = 'd'").value(), [above53 + 1n]);
});

Deno.test("positional parameters: spread, one array, numbered", () => {
  using db = memory();
  db.exec("CREATE TABLE t (a, b, c)");
  const insert = db.prepare("INSERT INTO t VALUES (?, ?, ?)");
  assert.equal(insert.run(1, "x", null), 1);
  assert.equal(insert.run([2, "y", new Uint8Array([9])]), 1);
  const rows = db.prepare("SELECT a, b, c FROM t ORDER BY a").values();
  assert.deepEqual(rows, [[1, "x", null], [2, "y", new Uint8Array([9])]]);
  // Fewer values than parameters: the rest are NULL, not left over from the last call.
  insert.run(3);
  assert.deepEqual(db.prepare("SELECT b, c FROM t WHERE a = 3").value(), [null, null]);
  assert.deepEqual(db.prepare("SELECT ?2, ?1").value("one", "two"), ["two", "one"]);
  // One Uint8Array or Date argument is a positional value, not named parameters.
  assert.deepEqual(db.prepare("SELECT length(?)").value(new Uint8Array(3)), [3]);
  assert.deepEqual(db.prepare("SELECT ?").value(new Date(0)), ["1970-01-01T00:00:00.000Z"]);
});

Deno.test("a statement run again binds every changed value, whatever stayed the same", () => {
  using db = memory();
  // Values equal to the last call's are not bound again (bindings survive reset): every
  // way a value can change, or look unchanged while it changed, must still reach SQLite.
  const select = db.prepare("SELECT ?, typeof(?1), ?, ?");
  assert.deepEqual(select.value("a", 1, null), ["a", "text", 1, null]);
  assert.deepEqual(select.value("a", 1, null), ["a", "text", 1, null]);
  assert.deepEqual(select.value("b", 1.5, undefined), ["b", "text", 1.5, null]);
  assert.deepEqual(select.value(1, "1", null), [1, "integer", "1", null]);
  assert.deepEqual(select.value(true, 1n, 0), [1, "integer", 1, 0]);
  assert.deepEqual(select.value(1, 1, -0), [1, "integer", 1, 0]);
  // A blob can change in place, so it is bound every time.
  const blob = new Uint8Array([1]);
  assert.deepEqual(select.value(blob, null, null), [new Uint8Array([1]), "blob", null, null]);
  blob[0] = 2;
  assert.deepEqual(select.value(blob, null, null), [new Uint8Array([2]), "blob", null, null]);
  // Fewer values clear the rest; the same values afterwards are bound again.
  assert.deepEqual(select.value("x", 2, 3), ["x", "text", 2, 3]);
  assert.deepEqual(select.value("x"), ["x", "text", null, null]);
  assert.deepEqual(select.value("x", 2, 3), ["x", "text", 2, 3]);
  assert.deepEqual(select.value("x", 2, 3), ["x", "text", 2, 3]);
  // A bind that fails part-way leaves nothing believed bound that is not.
  // deno-lint-ignore no-explicit-any
  assert.throws(() => select.value("y", Symbol("bad") as any, 3), TypeError);
  assert.deepEqual(select.value("x", 2, 3), ["x", "text", 2, 3]);
  // Named values clear every binding first.
  const named = db.prepare("SELECT :a, :b");
  assert.deepEqual(named.value({ a: 1, b: 2 }), [1, 2]);
  assert.deepEqual(named.value([1]), [1, null]);
  assert.deepEqual(named.value({ a: 1, b: 2 }), [1, 2]);
  // Long text, not kept in JS, and non-ASCII text round-trip on repeat.
  const long = "é".repeat(2000);
  assert.deepEqual(select.value(long, "ü", null), [long, "text", "ü", null]);
  assert.deepEqual(select.value(long, "ü", null), [long, "text", "ü", null]);
});

Deno.test("named parameters with :, @ and $ prefixes", () => {
  using db = memory();
  assert.deepEqual(db.prepare("SELECT :a, :b").value({ a: 1, b: "two" }), [1, "two"]);
  assert.deepEqual(db.prepare("SELECT @a, @b").value({ a: 3n, b: null }), [3, null]);
  assert.deepEqual(db.prepare("SELECT $a, $a + 1").value({ a: 10 }), [10, 11]);
  assert.deepEqual(db.prepare("SELECT :x").get({ x: "y", unused: 1 }), { ":x": "y" });
  // Re-binding clears the earlier values.
  const statement = db.prepare("SELECT :a, :b");
  statement.value({ a: 1, b: 2 });
  assert.deepEqual(statement.value({ a: 5, b: undefined }), [5, null]);
});

Deno.test("a missing named parameter is an error naming it", () => {
  using db = memory();
  assertSqliteError(
    () => db.prepare("SELECT :a, :b").value({ a: 1 }),
    SQLITE_RANGE,
    /missing value for "b"/,
  );
});

Deno.test("too many positional values is an error", () => {
  using db = memory();
  assertSqliteError(() => db.prepare("SELECT ?, ?").value(1, 2, 3), SQLITE_RANGE, /takes 2/);
  assertSqliteError(() => db.prepare("SELECT 1").run([1]), SQLITE_RANGE);
});

Deno.test("an unsupported bind type is a TypeError", () => {
  using db = memory();
  // deno-lint-ignore no-explicit-any
  assert.throws(() => db.prepare("SELECT ?").value(Symbol("x") as any), TypeError);
});

Deno.test("SqliteError carries the result code: constraint 19, syntax 1", () => {
  using db = memory();
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, u TEXT UNIQUE NOT NULL)");
  db.exec("INSERT INTO t VALUES (1, 'a')");
  const unique = assertSqliteError(
    () => db.prepare("INSERT INTO t VALUES (2, 'a')").run(),
    SQLITE_CONSTRAINT,
    /UNIQUE/,
  );
  assert.equal(unique.extendedCode, 2067); // SQLITE_CONSTRAINT_UNIQUE
  assertSqliteError(() => db.exec("INSERT INTO t VALUES (1, 'b')"), SQLITE_CONSTRAINT);
  assertSqliteError(() => db.exec("INSERT INTO t VALUES (3, NULL)"), SQLITE_CONSTRAINT);
  const syntax = assertSqliteError(() => db.exec("SELEC 1"), SQLITE_ERROR, /syntax/);
  assert.equal(syntax.name, "SqliteError");
  assertSqliteError(() => db.prepare("SELECT * FROM nope"), SQLITE_ERROR, /no such table/);
  assertSqliteError(() => db.prepare("   "), SQLITE_MISUSE, /no SQL/);
});

Deno.test("SQLITE_BUSY (5) when another process holds the write lock", async () => {
  using dir = tempDir();
  const path = join(dir.path, "busy.db");
  const ready = join(dir.path, "ready");
  const release = join(dir.path, "release");
  const db = new Database(path);
  try {
    db.exec("CREATE TABLE t (v TEXT)");
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-lock",
        "-A",
        fromFileUrl(new URL("./testdata/hold_write_lock.ts", import.meta.url)),
        path,
        ready,
        release,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const output = child.output();
    try {
      await waitForFile(ready, { exited: output });
      db.setBusyTimeout(0);
      assertSqliteError(() => db.exec("INSERT INTO t VALUES ('parent')"), SQLITE_BUSY);
      assertSqliteError(() => db.exec("BEGIN IMMEDIATE"), SQLITE_BUSY);
      assert.ok(!db.inTransaction);
      // Reading is still possible while the writer has not committed.
      assert.deepEqual(db.prepare("SELECT count(*) FROM t").value(), [0]);
    } finally {
      Deno.writeTextFileSync(release, "");
      const result = await output;
      assert.ok(
        result.success,
        `child failed (${result.code}): ${new TextDecoder().decode(result.stderr)}`,
      );
    }
    db.exec("INSERT INTO t VALUES ('parent')");
    assert.deepEqual(db.prepare("SELECT v FROM t").values(), [["parent"]]);
  } finally {
    db.close();
  }
});

Deno.test("a finalized statement fails clearly on use", () => {
  using db = memory();
  const statement = db.prepare("SELECT 1");
  assert.ok(!statement.finalized);
  statement.finalize();
  statement.finalize(); // idempotent
  assert.ok(statement.finalized);
  for (
    const use of [
      () => statement.run(),
      () => statement.get(),
      () => statement.all(),
      () => statement.values(),
      () => statement.value(),
    ]
  ) {
    assertSqliteError(use, SQLITE_MISUSE, /finalized.*prepare it again/);
  }
});

Deno.test("close() is idempotent, finalizes statements, and later use fails", () => {
  const db = memory();
  const a = db.prepare("SELECT 1");
  const b = db.prepare("SELECT 2");
  b.finalize();
  db.close();
  db.close();
  assert.ok(!db.open);
  assert.ok(a.finalized);
  assert.ok(!db.inTransaction);
  assertSqliteError(() => a.value(), SQLITE_MISUSE, /finalized/);
  assertSqliteError(() => db.prepare("SELECT 1"), SQLITE_MISUSE, /closed/);
  assertSqliteError(() => db.exec("SELECT 1"), SQLITE_MISUSE, /closed/);
  assertSqliteError(() => db.lastInsertRowId, SQLITE_MISUSE, /closed/);
});

Deno.test("using closes the database and finalizes the statement", () => {
  let outer: Database | undefined;
  let statement: ReturnType<Database["prepare"]> | undefined;
  {
    using db = memory();
    outer = db;
    {
      using inner = db.prepare("SELECT 1");
      statement = inner;
      assert.deepEqual(inner.value(), [1]);
    }
    assert.ok(statement.finalized);
    assert.ok(db.open);
  }
  assert.ok(!outer.open);
});

Deno.test("statement accessors: sql, columnNames, get, all, values, value", () => {
  using db = memory();
  db.exec("CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
  const statement = db.prepare("SELECT a, b AS bee FROM t ORDER BY a");
  assert.equal(statement.sql, "SELECT a, b AS bee FROM t ORDER BY a");
  assert.deepEqual(statement.columnNames, ["a", "bee"]);
  assert.deepEqual(statement.get(), { a: 1, bee: "x" });
  assert.deepEqual(statement.all(), [{ a: 1, bee: "x" }, { a: 2, bee: "y" }]);
  assert.deepEqual(statement.values(), [[1, "x"], [2, "y"]]);
  assert.deepEqual(statement.value(), [1, "x"]);
  assert.equal(db.prepare("SELECT a FROM t WHERE a > 5").get(), undefined);
  assert.equal(db.prepare("SELECT a FROM t WHERE a > 5").value(), undefined);
  assert.deepEqual(db.prepare("SELECT a FROM t WHERE a > 5").all(), []);
});

Deno.test("transaction() commits on return and rolls back on throw", () => {
  using db = memory();
  db.exec("CREATE TABLE t (v INTEGER)");
  const insert = db.prepare("INSERT INTO t VALUES (?)");
  const add = db.transaction((...values: number[]) => {
    assert.ok(db.inTransaction);
    for (const v of values) insert.run(v);
    return values.length;
  });
  assert.equal(add(1, 2), 2);
  assert.ok(!db.inTransaction);
  const failing = db.transaction(() => {
    insert.run(3);
    throw new Error("boom");
  });
  assert.throws(() => failing(), /boom/);
  assert.ok(!db.inTransaction);
  assert.deepEqual(db.prepare("SELECT v FROM t ORDER BY v").values(), [[1], [2]]);
});

Deno.test("transaction() nests with savepoints", () => {
  using db = memory();
  db.exec("CREATE TABLE t (v INTEGER)");
  const insert = db.prepare("INSERT INTO t VALUES (?)");
  const inner = db.transaction((v: number, fail: boolean) => {
    insert.run(v);
    if (fail) throw new Error(`inner ${v}`);
  });
  const outer = db.transaction(() => {
    insert.run(1);
    inner(2, false);
    assert.throws(() => inner(3, true), /inner 3/);
    assert.ok(db.inTransaction); // the outer transaction survives the inner failure
    inner(4, false);
  });
  outer();
  assert.deepEqual(db.prepare("SELECT v FROM t ORDER BY v").values(), [[1], [2], [4]]);
  // An outer failure undoes the committed savepoints too.
  const outerFails = db.transaction(() => {
    inner(5, false);
    throw new Error("outer");
  });
  assert.throws(() => outerFails(), /outer/);
  assert.deepEqual(db.prepare("SELECT v FROM t ORDER BY v").values(), [[1], [2], [4]]);
});

Deno.test("transaction().immediate takes the write lock at BEGIN", () => {
  using dir = tempDir();
  const path = join(dir.path, "imm.db");
  using db = new Database(path);
  db.exec("CREATE TABLE t (v INTEGER)");
  using other = new Database(path);
  other.setBusyTimeout(0);
  const forms = db.transaction(() => {
    // Before any write in this transaction, another connection is already locked out.
    assertSqliteError(() => other.exec("INSERT INTO t VALUES (0)"), SQLITE_BUSY);
    db.exec("INSERT INTO t VALUES (1)");
  });
  forms.immediate();
  forms.exclusive();
  let sawDeferredUnlocked = false;
  db.transaction(() => {
    other.exec("INSERT INTO t VALUES (2)"); // deferred: no lock taken yet
    sawDeferredUnlocked = true;
  }).deferred();
  assert.ok(sawDeferredUnlocked);
  assert.deepEqual(db.prepare("SELECT v FROM t ORDER BY v").values(), [[1], [1], [2]]);
});

Deno.test("changes, totalChanges, lastInsertRowId and inTransaction", () => {
  using db = memory();
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)");
  assert.equal(db.totalChanges, 0);
  db.exec("INSERT INTO t (v) VALUES (1), (2), (3)");
  assert.equal(db.changes, 3);
  assert.equal(db.lastInsertRowId, 3);
  assert.equal(db.prepare("UPDATE t SET v = v + 1 WHERE v >= ?").run(2), 2);
  assert.equal(db.changes, 2);
  assert.equal(db.totalChanges, 5);
  assert.ok(!db.inTransaction);
  db.exec("BEGIN");
  assert.ok(db.inTransaction);
  db.exec("ROLLBACK");
  assert.ok(!db.inTransaction);
});

Deno.test("sqliteVersion() is x.y.z and the library is DENO_SQLITE_PATH when set", () => {
  assert.match(sqliteVersion(), /^3\.\d+\.\d+$/);
  const explicit = Deno.env.get("DENO_SQLITE_PATH");
  if (explicit) assert.equal(sqliteLibraryPath(), explicit);
  else assert.match(sqliteLibraryPath(), /sqlite3/);
});

Deno.test("a missing library is an error naming DENO_SQLITE_PATH and how to install SQLite", async () => {
  const result = await runDeno(new URL("./testdata/load_library.ts", import.meta.url), [], {
    env: { DENO_SQLITE_PATH: "/nonexistent/libsqlite3.so" },
  });
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /SqliteLibraryError/);
  assert.match(result.stderr, /\/nonexistent\/libsqlite3\.so/);
  assert.match(result.stderr, /DENO_SQLITE_PATH/);
  assert.match(result.stderr, /install SQLite/);
  assert.match(result.stderr, /apt-get install libsqlite3-0/);
});
