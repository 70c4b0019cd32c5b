/**
 * Builds a WAL-reset-fixed libsqlite3 (SQLite 3.53.2, which is >= 3.51.3) from the official
 * amalgamation shipped inside the npm package `better-sqlite3@12.11.1`, into the ignored cache
 * folder `.cache/sqlite/3.53.2/`. A second build is a no-op once the library exists and
 * verifies. `deno task sqlite` (`tools/build_sqlite.ts`) is its command line.
 *
 * @example
 * ```ts ignore
 * import { buildFixedSqlite } from "./sqlite_build.ts";
 * console.log(await buildFixedSqlite({ log: console.log }));
 * ```
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { exists } from "../internal/fs.ts";

/** SQLite version of the amalgamation in {@link NPM_PACKAGE}. */
export const FIXED_SQLITE_VERSION = "3.53.2";
const SQLITE_VERSION = FIXED_SQLITE_VERSION;
/** npm package whose tarball carries the official SQLite amalgamation. */
export const NPM_PACKAGE = "better-sqlite3@12.11.1";
/** Paths of the amalgamation files inside the npm tarball. */
const TAR_MEMBERS = ["package/deps/sqlite3/sqlite3.c", "package/deps/sqlite3/sqlite3.h"];
/** Compile-time options for the shared library. */
const SQLITE_DEFINES = [
  "-DSQLITE_THREADSAFE=1",
  "-DSQLITE_DQS=0",
  "-DSQLITE_DEFAULT_WAL_SYNCHRONOUS=2",
  "-DSQLITE_ENABLE_FTS5",
];

const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Returns the path where the fixed SQLite library is (or will be) built:
 * `<project root>/.cache/sqlite/3.53.2/libsqlite3.so` (`libsqlite3.dylib` on macOS).
 *
 * The file may not exist yet; call {@link buildFixedSqlite} to create it.
 *
 * @returns The absolute path of the fixed libsqlite3 shared library.
 *
 * @example Point the session database at the fixed library
 * ```ts
 * import { fixedSqlitePath } from "./sqlite_build.ts";
 *
 * Deno.env.set("DENO_SQLITE_PATH", fixedSqlitePath());
 * ```
 */
export function fixedSqlitePath(): string {
  const ext = Deno.build.os === "darwin" ? "dylib" : "so";
  return join(PROJECT_ROOT, ".cache", "sqlite", SQLITE_VERSION, `libsqlite3.${ext}`);
}

/**
 * Builds the fixed SQLite library at {@link fixedSqlitePath} unless it already exists and
 * reports version 3.53.2.
 *
 * Needs `npm`, `tar` and a C compiler (`$CC`, else `cc`, `gcc` or `clang`), plus read, write,
 * env, run and ffi permissions. The build takes about 30 seconds.
 *
 * @param options Build options.
 * @param options.log Where progress lines go (default: nowhere; errors are thrown).
 * @returns The absolute path of the verified library.
 * @throws {Error} When a tool is missing, a step fails or the built library has the wrong
 * version.
 *
 * @example Build (or reuse) the library and open it
 * ```ts ignore
 * import { buildFixedSqlite } from "./sqlite_build.ts";
 *
 * const path = await buildFixedSqlite({ log: console.log });
 * console.log(`fixed SQLite at ${path}`);
 * ```
 */
export async function buildFixedSqlite(
  options: { log?: (line: string) => void } = {},
): Promise<string> {
  const started = performance.now();
  const log = (line: string): void => {
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    options.log?.(`sqlite: ${line} [${seconds} s]`);
  };
  const target = fixedSqlitePath();

  if (exists(target)) {
    const version = sqliteLibraryVersion(target);
    if (version === SQLITE_VERSION) {
      options.log?.(`sqlite: already built: ${target}`);
      return target;
    }
    log(`existing library is not usable (${version ?? "cannot load"}): rebuilding`);
  }

  const tools = await buildTools();
  await Deno.mkdir(join(target, ".."), { recursive: true });
  const tmpDir = await Deno.makeTempDir({ prefix: "build-sqlite-" });
  const tmpOut = `${target}.tmp-${Deno.pid}-${Date.now()}`;
  try {
    const srcDir = await fetchAmalgamation(tools, tmpDir, log);
    await compileLibrary(tools.cc, { srcDir, out: tmpOut }, log);
    await Deno.rename(tmpOut, target);
  } finally {
    await Deno.remove(tmpOut).catch(() => {});
    await Deno.remove(tmpDir, { recursive: true }).catch(() => {});
  }

  const version = sqliteLibraryVersion(target);
  if (version !== SQLITE_VERSION) {
    throw new Error(
      `Cannot verify SQLite: ${target} reports version ${version ?? "(cannot load)"}, ` +
        `expected ${SQLITE_VERSION}`,
    );
  }
  log(`built and verified SQLite ${version}`);
  return target;
}

/** The programs a build runs. */
interface BuildTools {
  npm: string;
  tar: string;
  cc: string[];
}

/** Finds npm, tar and a C compiler, or throws naming the one missing and how to get it. */
async function buildTools(): Promise<BuildTools> {
  const npm = await findTool(["npm"]);
  if (npm === undefined) {
    throw new Error(
      "Cannot build SQLite: npm not found: install Node.js with npm (Debian: apt-get install npm)",
    );
  }
  const tar = await findTool(["tar"]);
  if (tar === undefined) {
    throw new Error("Cannot build SQLite: tar not found: install it (Debian: apt-get install tar)");
  }
  return { npm, tar, cc: await findCompiler() };
}

/**
 * Downloads the npm package and extracts the amalgamation into `tmpDir`, checking its
 * version; returns the folder of `sqlite3.c`.
 */
async function fetchAmalgamation(
  tools: BuildTools,
  tmpDir: string,
  log: (line: string) => void,
): Promise<string> {
  log(`downloading amalgamation from npm package ${NPM_PACKAGE}…`);
  await run(tools.npm, [
    "pack",
    NPM_PACKAGE,
    "--pack-destination",
    tmpDir,
    "--prefer-offline",
    "--silent",
  ], tmpDir);
  const tarball = await findTarball(tmpDir);

  log("extracting sqlite3.c and sqlite3.h…");
  await run(tools.tar, ["-xzf", tarball, "-C", tmpDir, ...TAR_MEMBERS], tmpDir);
  const srcDir = join(tmpDir, "package", "deps", "sqlite3");
  const header = await Deno.readTextFile(join(srcDir, "sqlite3.h"));
  const headerVersion = /#define SQLITE_VERSION\s+"([^"]+)"/.exec(header)?.[1];
  if (headerVersion !== SQLITE_VERSION) {
    throw new Error(
      `Cannot build SQLite: ${NPM_PACKAGE} ships SQLite ${headerVersion ?? "(unknown)"}, ` +
        `expected ${SQLITE_VERSION}`,
    );
  }
  return srcDir;
}

/** Compiles the amalgamation in `paths.srcDir` into `paths.out` and checks its version. */
async function compileLibrary(
  cc: readonly string[],
  paths: { srcDir: string; out: string },
  log: (line: string) => void,
): Promise<void> {
  log(`compiling with ${cc.join(" ")} (about 30 s)…`);
  await run(cc[0]!, [
    ...cc.slice(1),
    "-O2",
    "-shared",
    "-fPIC",
    ...SQLITE_DEFINES,
    "-o",
    paths.out,
    "sqlite3.c",
    "-lpthread",
    "-lm",
  ], paths.srcDir);
  log("compiled");

  const built = sqliteLibraryVersion(paths.out);
  if (built !== SQLITE_VERSION) {
    throw new Error(
      `Cannot build SQLite: built library reports version ${built ?? "(cannot load)"}, ` +
        `expected ${SQLITE_VERSION}`,
    );
  }
}

/**
 * Loads the library at `path` and returns `sqlite3_libversion()`, or undefined if it cannot
 * be loaded. Reads the C string with strlen + memcpy, since `Deno.UnsafePointerView` is not
 * allowed under scoped ffi permissions.
 *
 * @param path A SQLite shared library.
 * @returns Its version, or `undefined`.
 * @example
 * ```ts ignore
 * import { fixedSqlitePath, sqliteLibraryVersion } from "./sqlite_build.ts";
 * console.log(sqliteLibraryVersion(fixedSqlitePath()) ?? "not built");
 * ```
 */
export function sqliteLibraryVersion(path: string): string | undefined {
  let lib;
  try {
    lib = Deno.dlopen(
      path,
      {
        sqlite3_libversion: { parameters: [], result: "usize" },
        strlen: { parameters: ["usize"], result: "usize" },
        memcpy: { parameters: ["buffer", "usize", "usize"], result: "usize" },
      } as const,
    );
  } catch {
    return undefined;
  }
  try {
    const ptr = lib.symbols.sqlite3_libversion();
    if (BigInt(ptr) === 0n) return undefined;
    const len = Number(lib.symbols.strlen(ptr));
    const bytes = new Uint8Array(len);
    lib.symbols.memcpy(bytes, ptr, BigInt(len));
    return new TextDecoder().decode(bytes);
  } finally {
    lib.close();
  }
}

/** Returns the first of `names` that runs with `--version`, or undefined. */
async function findTool(names: string[]): Promise<string | undefined> {
  for (const name of names) {
    if (await runs([name, "--version"])) return name;
  }
  return undefined;
}

/** Returns the C compiler command (program and leading arguments) to use. */
async function findCompiler(): Promise<string[]> {
  const fromEnv = Deno.env.get("CC")?.trim();
  if (fromEnv) {
    const cc = fromEnv.split(/\s+/);
    if (await runs([...cc, "--version"])) return cc;
    throw new Error(
      `Cannot build SQLite: the C compiler in CC does not run: ${fromEnv}: fix or unset CC`,
    );
  }
  const cc = await findTool(["cc", "gcc", "clang"]);
  if (cc === undefined) {
    throw new Error(
      "Cannot build SQLite: no C compiler found (tried cc, gcc, clang): " +
        "install one (Debian: apt-get install gcc) or set CC",
    );
  }
  return [cc];
}

async function runs(argv: string[]): Promise<boolean> {
  try {
    const { success } = await new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return success;
  } catch {
    return false;
  }
}

/** Runs a command, failing with its output when it exits non-zero. */
async function run(cmd: string, args: string[], cwd: string): Promise<void> {
  const { success, code, stdout, stderr } = await new Deno.Command(cmd, {
    args,
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!success) {
    const decoder = new TextDecoder();
    const full = (decoder.decode(stderr) + decoder.decode(stdout)).trim();
    const output = full.length > 4000 ? `…${full.slice(-4000)}` : full;
    throw new Error(
      `Cannot build SQLite: ${cmd} ${args.join(" ")} exited with code ${code}` +
        (output ? `: ${output}` : ""),
    );
  }
}

async function findTarball(dir: string): Promise<string> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isFile && entry.name.endsWith(".tgz")) return join(dir, entry.name);
  }
  throw new Error(`Cannot build SQLite: npm pack left no tarball: ${dir}`);
}
