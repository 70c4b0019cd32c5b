// Database files are private: the database and every journal SQLite creates beside it
// are 0600, whatever the umask, including the hot journal a crash leaves behind.
import assert from "node:assert/strict";
import { join } from "node:path";
import { cleanEnv, tempDir } from "./_test_helpers.ts";
import { fromFileUrl } from "../internal/path.ts";

const APPEND_MESSAGES = new URL("./testdata/append_messages.ts", import.meta.url);

for (const mode of ["delete", "wal"] as const) {
  Deno.test({
    name: `with umask 000, a crash in ${mode} mode leaves only 0600 files`,
    ignore: Deno.build.os === "windows",
    async fn() {
      using dir = tempDir();
      const path = join(dir.path, "private.db");
      // The shell sets the umask the child inherits; the child dies mid-transaction.
      const output = await new Deno.Command("sh", {
        args: [
          "-c",
          'umask 000 && exec "$0" run --no-lock -A "$@"',
          Deno.execPath(),
          fromFileUrl(APPEND_MESSAGES),
          path,
          "5",
        ],
        clearEnv: true,
        env: cleanEnv({
          SESSION_DB_JOURNAL_MODE: mode,
          SESSION_DB_CRASH_AT: "appendMessage:afterInsert@3",
        }),
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(output.signal, "SIGKILL", new TextDecoder().decode(output.stderr));
      const files = [...Deno.readDirSync(dir.path)].map((entry) => entry.name).sort();
      // What a crash mid-write leaves: the hot journal, or the WAL and its index.
      const expected = files.includes("private.db-wal")
        ? ["private.db", "private.db-shm", "private.db-wal"]
        : ["private.db", "private.db-journal"];
      assert.deepEqual(files, expected);
      for (const name of files) {
        assert.equal(
          (Deno.statSync(join(dir.path, name)).mode! & 0o777).toString(8),
          "600",
          `${name} is not private`,
        );
      }
    },
  });
}
