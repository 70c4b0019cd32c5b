import { strictEqual } from "node:assert/strict";
import { stderrLine } from "./stderr_line.ts";

Deno.test("stderrLine: an uncaught error keeps its message and its first frames, not the excerpt", () => {
  const stderr = [
    "error: Uncaught (in promise) SqliteError: database is locked",
    "    return new SqliteError(code, sql ? `${text}: ${sql}` : text);",
    "           ^",
    "    at Database._error (file:///a/database.ts:323:12)",
    "    at Database.exec (file:///a/database.ts:217:18)",
    "    at openStore (file:///b/target.ts:5:10)",
    "    at async file:///c/sweep.ts:58:15",
  ].join("\n");
  strictEqual(
    stderrLine(stderr),
    "error: Uncaught (in promise) SqliteError: database is locked | " +
      "    at Database._error (file:///a/database.ts:323:12) | " +
      "    at Database.exec (file:///a/database.ts:217:18)",
  );
});

Deno.test("stderrLine: other output keeps its last four lines", () => {
  strictEqual(
    stderrLine("a\nb\nc\nd\nopen threw StorageError: full\n"),
    "b | c | d | open threw StorageError: full",
  );
});
