// The damages F2 makes, on a real SQLite file: the page damage hits a leaf of message rows
// and SQLite finds it; a damage inside a text value it cannot find, which is why F2 never
// makes one (no store without checksums of its own could refuse it).
import { ok, strictEqual } from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { testFolder } from "../../internal/_test_folder.ts";
import { damage, damagesFor, isSqlite, pageHolding } from "./_damage.ts";

function messagesFile(): { path: string; bytes: Uint8Array } {
  const path = `${testFolder()}/store.db`;
  const db = new DatabaseSync(path);
  db.exec("CREATE TABLE messages (id INTEGER PRIMARY KEY, content TEXT)");
  const insert = db.prepare("INSERT INTO messages (content) VALUES (?)");
  for (let i = 0; i < 30; i++) insert.run(`text ${i} ${"x".repeat(300)}`);
  db.close();
  return { path, bytes: Deno.readFileSync(path) };
}

function integrity(path: string, bytes: Uint8Array): string {
  Deno.writeFileSync(path, bytes);
  const db = new DatabaseSync(path);
  try {
    const rows = db.prepare("PRAGMA integrity_check").all() as { integrity_check: string }[];
    return rows.map((row) => row.integrity_check).join("; ");
  } catch (error) {
    return String(error);
  } finally {
    db.close();
  }
}

Deno.test("an SQLite file gets the page, truncation and header damages; a log its middle record", () => {
  const { bytes } = messagesFile();
  ok(isSqlite(bytes));
  strictEqual(damagesFor(bytes).join(), "page,truncation,header");
  strictEqual(damagesFor(new TextEncoder().encode('{"t":"session"}\n')).join(), "middle record");
});

Deno.test("the page damage zeroes the leaf holding the text, and SQLite finds it", () => {
  const { path, bytes } = messagesFile();
  const page = pageHolding(bytes, "text 15 ");
  ok(page !== undefined && page > 1, `page ${page}`);
  const damaged = damage(bytes, "page", "text 15 ");
  ok("bytes" in damaged);
  ok(damaged.detail.startsWith(`page ${page} of `), damaged.detail);
  ok(integrity(`${path}.page`, damaged.bytes) !== "ok");
});

Deno.test("truncation and a foreign header are found by SQLite", () => {
  const { path, bytes } = messagesFile();
  for (const name of ["truncation", "header"] as const) {
    const damaged = damage(bytes, name, "text 15 ");
    ok("bytes" in damaged);
    ok(integrity(`${path}.${name}`, damaged.bytes) !== "ok", name);
  }
});

Deno.test("bytes changed inside a text value pass integrity_check: F2 does not make that damage", () => {
  const { path, bytes } = messagesFile();
  const copy = bytes.slice();
  const at = copy.indexOf(0x78, copy.length / 2); // an "x" of some message's text
  copy[at] = 0x79;
  strictEqual(integrity(`${path}.text`, copy), "ok");
});

Deno.test("the middle record of a log is zeroed inside, never split", () => {
  const lines = Array.from({ length: 9 }, (_, i) => JSON.stringify({ t: "message", id: i }));
  const bytes = new TextEncoder().encode(lines.map((line) => `${line}\n`).join(""));
  const damaged = damage(bytes, "middle record", "");
  ok("bytes" in damaged);
  const text = new TextDecoder().decode(damaged.bytes).split("\n");
  strictEqual(text.length, bytes.filter((b) => b === 0x0a).length + 1);
  strictEqual(text.filter((line) => line.includes("\0")).length, 1, damaged.detail);
});
