/**
 * `deno task sqlite`: builds the WAL-reset-fixed SQLite 3.53.2 into `.cache/sqlite/`
 * (`runner/sqlite_build.ts`). The last line printed is the library's path.
 *
 * Flags and exit codes: `--help` ({@linkcode BUILD_SQLITE_CLI}).
 *
 * @module
 */
import { buildFixedSqlite, FIXED_SQLITE_VERSION, NPM_PACKAGE } from "../runner/sqlite_build.ts";
import { parseFlags, type ToolSpec } from "./_cli.ts";

/** The build's command line (its `--help`). */
export const BUILD_SQLITE_CLI: ToolSpec = {
  usage: "deno task sqlite",
  summary: `Builds SQLite ${FIXED_SQLITE_VERSION} (WAL-reset fixed) from the amalgamation inside
the npm package ${NPM_PACKAGE} into .cache/sqlite/${FIXED_SQLITE_VERSION}/ (about 30 s;
needs npm, tar and a C compiler: $CC, else cc, gcc or clang). A no-op once the library
exists and reports ${FIXED_SQLITE_VERSION}. The last line printed is the library's path.`,
  flags: [{ name: "--quiet", help: "print only the library's path" }],
  exitCodes: {
    0: "the library is built and verified",
    1: "the build failed (the message says why)",
  },
};

if (import.meta.main) {
  const quiet = parseFlags(BUILD_SQLITE_CLI, Deno.args).has("--quiet");
  try {
    console.log(await buildFixedSqlite(quiet ? {} : { log: console.log }));
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    Deno.exit(1);
  }
}
