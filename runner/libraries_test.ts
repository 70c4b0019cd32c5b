// A library given by path is one only when it is a SQLite library: a file that is not
// would fail every cell of a correct store.
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { resolveLibraries } from "./libraries.ts";
import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
import { sqliteLibraryProblem } from "../session_db/sqlite/library.ts";
import { exists } from "../internal/fs.ts";

const LIBC = `/lib/${Deno.build.arch}-linux-gnu/libc.so.6`;

Deno.test("sqliteLibraryProblem: a SQLite library has none; other files are named", () => {
  strictEqual(sqliteLibraryProblem(sqliteLibraryPath()), undefined);
  const text = Deno.makeTempFileSync();
  match(sqliteLibraryProblem(text)!, /is not a loadable shared library/);
  match(
    sqliteLibraryProblem("/nowhere/libsqlite3.so")!,
    /\/nowhere\/libsqlite3\.so does not exist/,
  );
  Deno.removeSync(text);
});

Deno.test({
  name: "resolveLibraries: a path that is no SQLite library is unavailable, with why",
  ignore: !exists(LIBC),
}, async () => {
  const text = Deno.makeTempFileSync();
  const good = sqliteLibraryPath();
  const choice = await resolveLibraries([text, LIBC, good]);
  deepStrictEqual(choice.libraries, [{ label: good, path: good }]);
  deepStrictEqual(choice.unavailable.map((u) => u.label), [text, LIBC]);
  match(choice.unavailable[0]!.why, /is not a loadable shared library/);
  match(choice.unavailable[1]!.why, /is not a SQLite library: it lacks the symbol sqlite3_/);
  Deno.removeSync(text);
});
