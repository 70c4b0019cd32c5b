import { fixedSqlitePath } from "../runner/sqlite_build.ts";
import { runTool } from "./_test_helpers.ts";

const path = fixedSqlitePath();
const built = (() => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
})();

function assert(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

Deno.test("fixedSqlitePath lies under .cache/sqlite/", () => {
  const normalized = path.replaceAll("\\", "/");
  assert(
    normalized.includes("/.cache/sqlite/3.53.2/libsqlite3."),
    `Unexpected fixed SQLite path: ${path}`,
  );
});

Deno.test({
  name: "fixed SQLite library reports version 3.53.2",
  ignore: !built,
  fn() {
    const lib = Deno.dlopen(
      path,
      {
        sqlite3_libversion: { parameters: [], result: "usize" },
        strlen: { parameters: ["usize"], result: "usize" },
        memcpy: { parameters: ["buffer", "usize", "usize"], result: "usize" },
      } as const,
    );
    try {
      const ptr = lib.symbols.sqlite3_libversion();
      const bytes = new Uint8Array(Number(lib.symbols.strlen(ptr)));
      lib.symbols.memcpy(bytes, ptr, BigInt(bytes.length));
      const version = new TextDecoder().decode(bytes);
      assert(version === "3.53.2", `Fixed SQLite reports version ${version}, expected 3.53.2`);
    } finally {
      lib.close();
    }
  },
});

Deno.test("deno task sqlite: --help prints the flags and exit codes; a usage error exits 2", async () => {
  const build = (arg: string) =>
    runTool(new URL("./build_sqlite.ts", import.meta.url), [arg], {
      permissions: ["--allow-read", "--allow-env"],
    });
  const help = await build("--help");
  assert(help.code === 0, `--help exited ${help.code}`);
  assert(/^Usage: deno task sqlite \[flags\]/.test(help.stdout), help.stdout);
  assert(help.stdout.includes("--quiet"), help.stdout);
  const bad = await build("--jobs=4");
  assert(bad.code === 2, `a bad flag exited ${bad.code}: ${bad.stderr}`);
  assert(bad.stderr.includes(`Invalid argument "--jobs=4": use --quiet (see --help)`), bad.stderr);
});
