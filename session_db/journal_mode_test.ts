import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Database,
  decideJournalMode,
  DEFAULT_JOURNAL_MODE,
  isWalResetVulnerable,
  type JournalMode,
  onDiskJournalMode,
  SessionDB,
  SessionDBOpenError,
  sqliteVersion,
} from "./mod.ts";
import { runDeno, tempDir } from "./_test_helpers.ts";

const OPEN_STORE = new URL("./testdata/open_store.ts", import.meta.url);

type Request = "unset" | JournalMode;
type Existing = "new" | "delete" | "wal";

interface ChildReport {
  envMode: string | null;
  results: { path: string; journalMode?: string; reason?: string; error?: string }[];
}

const VULNERABLE = isWalResetVulnerable(sqliteVersion());

/** What the resolver must leave on disk (DESIGN §2). */
function expected(request: Request, existing: Existing): JournalMode {
  if (request === "delete") return "delete";
  if (!VULNERABLE) return "wal";
  return existing === "wal" ? "wal" : "delete";
}

/** A database file in the given state: absent, in DELETE mode, or in WAL mode. */
function prepareFile(dir: string, name: string, existing: Existing): string {
  const path = join(dir, `${name}.db`);
  if (existing === "new") return path;
  const store = SessionDB.open(path, { journalMode: "delete" });
  store.createSession("s");
  store.appendMessage("s", { role: "user", content: "kept" });
  store.close();
  if (existing === "wal") {
    // Raw, so that a vulnerable library can still produce a file already in WAL.
    const db = new Database(path);
    assert.deepEqual(db.prepare("PRAGMA journal_mode = WAL").value(), ["wal"]);
    db.close();
  }
  assert.equal(onDiskJournalMode(path), existing);
  return path;
}

function assertKept(path: string, existing: Existing): void {
  if (existing === "new") return;
  const db = SessionDB.open(path, { readonly: true });
  try {
    assert.deepEqual(db.getMessages("s").map((m) => m.content), ["kept"]);
  } finally {
    db.close();
  }
}

Deno.test("isWalResetVulnerable follows the affected ranges and backports", () => {
  const table: [string, boolean][] = [
    ["3.6.23", false],
    ["3.7.0", true],
    ["3.40.1", true],
    ["3.44.5", true],
    ["3.44.6", false],
    ["3.44.9", false],
    ["3.45.0", true],
    ["3.46.1", true],
    ["3.50.6", true],
    ["3.50.7", false],
    ["3.51.0", true],
    ["3.51.2", true],
    ["3.51.3", false],
    ["3.52.0", false],
    ["3.53.2", false],
  ];
  for (const [version, vulnerable] of table) {
    assert.equal(isWalResetVulnerable(version), vulnerable, version);
  }
});

Deno.test("decideJournalMode: DELETE always honoured, WAL gated on new and DELETE files", () => {
  const table: [JournalMode, string, string, JournalMode][] = [
    ["delete", "3.40.1", "delete", "delete"],
    ["delete", "3.40.1", "wal", "delete"],
    ["delete", "3.53.2", "wal", "delete"],
    ["wal", "3.40.1", "wal", "wal"], // never live-downgraded
    ["wal", "3.40.1", "delete", "delete"],
    ["wal", "3.40.1", "truncate", "delete"],
    ["wal", "3.46.1", "delete", "delete"],
    ["wal", "3.51.2", "delete", "delete"],
    ["wal", "3.44.6", "delete", "wal"],
    ["wal", "3.50.7", "delete", "wal"],
    ["wal", "3.51.3", "delete", "wal"],
    ["wal", "3.53.2", "delete", "wal"],
    ["wal", "3.53.2", "wal", "wal"],
    ["wal", "3.6.23", "delete", "wal"],
  ];
  for (const [requested, version, onDisk, mode] of table) {
    const decision = decideJournalMode(requested, version, onDisk);
    const label = `${requested} on ${version} with ${onDisk}`;
    assert.equal(decision.mode, mode, label);
    assert.equal(decision.requested, requested, label);
    if (mode === requested) assert.equal(decision.reason, "as requested", label);
    else assert.match(decision.reason, new RegExp(`WAL-reset gate: SQLite ${version}`), label);
  }
});

Deno.test("the resolver on the loaded library: explicit delete and wal", () => {
  using dir = tempDir();
  for (const request of ["delete", "wal"] as const) {
    for (const existing of ["new", "delete", "wal"] as const) {
      const label = `${request} × ${existing} file on SQLite ${sqliteVersion()}`;
      const path = prepareFile(dir.path, `${request}-${existing}`, existing);
      const db = SessionDB.open(path, { journalMode: request });
      const want = expected(request, existing);
      try {
        assert.equal(db.journalMode, want, label);
        if (want !== request) assert.match(db.journalModeReason, /WAL-reset gate/, label);
        db.createSession("written");
      } finally {
        db.close();
      }
      assert.equal(onDiskJournalMode(path), want, label);
      assertKept(path, existing);
    }
  }
});

Deno.test("the resolver on the loaded library: unset (clean environment in a child)", async () => {
  using dir = tempDir();
  const existing = ["new", "delete", "wal"] as const;
  const paths = existing.map((state) => prepareFile(dir.path, `unset-${state}`, state));
  const child = await runDeno(OPEN_STORE, paths); // SESSION_DB_JOURNAL_MODE is not passed
  assert.ok(child.success, child.stderr);
  assert.doesNotMatch(child.stderr, /SESSION_DB_JOURNAL_MODE/); // nothing to warn about
  const report: ChildReport = JSON.parse(child.stdout);
  assert.equal(report.envMode, null);
  existing.forEach((state, i) => {
    const label = `unset × ${state} file on SQLite ${sqliteVersion()}`;
    assert.equal(report.results[i]?.journalMode, expected("unset", state), label);
    assert.equal(onDiskJournalMode(paths[i]!), expected("unset", state), label);
    assertKept(paths[i]!, state);
  });
  assert.equal(
    expected("unset", "new"),
    decideJournalMode(DEFAULT_JOURNAL_MODE, sqliteVersion(), "delete").mode,
  );
});

Deno.test("SESSION_DB_JOURNAL_MODE is read case-insensitively", async () => {
  using dir = tempDir();
  const path = join(dir.path, "env.db");
  const child = await runDeno(OPEN_STORE, [path], { env: { SESSION_DB_JOURNAL_MODE: "DELETE" } });
  assert.ok(child.success, child.stderr);
  const report: ChildReport = JSON.parse(child.stdout);
  assert.equal(report.envMode, "delete");
  assert.equal(report.results[0]?.journalMode, "delete");
  assert.equal(onDiskJournalMode(path), "delete");
});

Deno.test("an unknown SESSION_DB_JOURNAL_MODE warns once and uses the default", async () => {
  using dir = tempDir();
  const paths = [join(dir.path, "a.db"), join(dir.path, "b.db")];
  const child = await runDeno(OPEN_STORE, paths, { env: { SESSION_DB_JOURNAL_MODE: "bogus" } });
  assert.ok(child.success, child.stderr);
  const warnings = child.stderr.split("\n").filter((line) =>
    line.includes("SESSION_DB_JOURNAL_MODE")
  );
  assert.equal(warnings.length, 1, child.stderr);
  assert.match(warnings[0]!, /"bogus".*wal, delete.*default wal/);
  const report: ChildReport = JSON.parse(child.stdout);
  assert.equal(report.envMode, null);
  for (const [i, path] of paths.entries()) {
    assert.equal(report.results[i]?.journalMode, expected("unset", "new"));
    assert.equal(onDiskJournalMode(path), expected("unset", "new"));
  }
});

Deno.test("a requested DELETE that SQLite cannot apply is a SessionDBOpenError", () => {
  using dir = tempDir();
  const path = prepareFile(dir.path, "held-wal", "wal");
  // Another connection with the file open in WAL mode prevents leaving WAL.
  const other = new Database(path);
  try {
    assert.deepEqual(other.prepare("SELECT count(*) FROM sessions").value(), [1]);
    assert.throws(
      () => SessionDB.open(path, { journalMode: "delete", busyTimeoutMs: 0, busyDeadlineMs: 0 }),
      (error: unknown) =>
        error instanceof SessionDBOpenError &&
        /journal mode delete was requested but SQLite kept wal/.test(error.message),
    );
  } finally {
    other.close();
  }
  assert.equal(onDiskJournalMode(path), "wal");
});

Deno.test("onDiskJournalMode: missing file, empty file", () => {
  using dir = tempDir();
  assert.equal(onDiskJournalMode(join(dir.path, "nope.db")), "missing");
  const empty = join(dir.path, "empty.db");
  Deno.writeFileSync(empty, new Uint8Array(0));
  assert.equal(onDiskJournalMode(empty), "delete");
});
