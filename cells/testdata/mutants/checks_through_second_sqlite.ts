/**
 * Mutant (fault tier, F3): right after it opens, it checks its database through a second
 * copy of SQLite (its own bundled library beside the binding's, as a store mixing two
 * SQLite packages does): that copy opens the file, reads its schema and closes it. Two
 * libraries keep two lock tables, so the copy's close drops every `fcntl` lock the
 * store's own connection holds on the file, on every journal mode.
 *
 * @module
 */
import { type SessionDB, sqliteLibraryPath } from "../../../session_db/mod.ts";
import { cString } from "../../../harness/_libc.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { openMutant } from "./_mutant.ts";

const SQLITE_OPEN_READONLY = 0x1;

/** Opens `path` through a fresh copy of the process's SQLite, reads it, closes it. */
function checkThroughSecondCopy(path: string): void {
  const copy = Deno.makeTempFileSync({ prefix: "second-sqlite-", suffix: ".so" });
  Deno.copyFileSync(sqliteLibraryPath(), copy);
  const second = Deno.dlopen(copy, {
    sqlite3_open_v2: { parameters: ["buffer", "buffer", "i32", "pointer"], result: "i32" },
    sqlite3_exec: {
      parameters: ["pointer", "buffer", "pointer", "pointer", "pointer"],
      result: "i32",
    },
    sqlite3_close_v2: { parameters: ["pointer"], result: "i32" },
  });
  Deno.removeSync(copy);
  const handle = new BigUint64Array(1);
  const opened = second.symbols.sqlite3_open_v2(
    cString(path),
    new Uint8Array(handle.buffer),
    SQLITE_OPEN_READONLY,
    null,
  );
  const db = Deno.UnsafePointer.create(handle[0]!);
  try {
    if (opened !== 0) throw new Error(`Cannot open "${path}" through the second SQLite: ${opened}`);
    second.symbols.sqlite3_exec(
      db,
      cString("SELECT count(*) FROM sqlite_master"),
      null,
      null,
      null,
    );
  } finally {
    second.symbols.sqlite3_close_v2(db);
  }
}

/** Opens the mutant: the reference store, its file checked through a second SQLite at open. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return openMutant(path, options, () => {
    checkThroughSecondCopy(path);
    return {};
  });
}
