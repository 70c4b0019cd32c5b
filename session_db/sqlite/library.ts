// Where the SQLite library comes from: `DENO_SQLITE_PATH`, else the system's libsqlite3.
import { describeLoadFailure } from "./_load_failure.ts";

/**
 * Raised when no SQLite library can be loaded.
 *
 * @example
 * ```ts
 * import { SqliteLibraryError } from "./library.ts";
 * import { sqliteVersion } from "./database.ts";
 * try {
 *   console.log(sqliteVersion());
 * } catch (error) {
 *   if (error instanceof SqliteLibraryError) console.error(error.message); // set DENO_SQLITE_PATH
 * }
 * ```
 */
export class SqliteLibraryError extends Error {
  /** Creates the error; `cause` keeps the last loader failure. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SqliteLibraryError";
  }
}

const SYSTEM_CANDIDATES: Record<string, string[]> = {
  linux: [
    "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0",
    "/usr/lib/aarch64-linux-gnu/libsqlite3.so.0",
    "/usr/lib64/libsqlite3.so.0",
    "/usr/lib/libsqlite3.so.0",
    "/lib/x86_64-linux-gnu/libsqlite3.so.0",
    "/lib/aarch64-linux-gnu/libsqlite3.so.0",
    "libsqlite3.so.0",
  ],
  darwin: [
    "/opt/homebrew/opt/sqlite/lib/libsqlite3.dylib",
    "/usr/local/opt/sqlite/lib/libsqlite3.dylib",
    "/usr/lib/libsqlite3.dylib",
    "libsqlite3.dylib",
  ],
  windows: ["sqlite3.dll"],
};

function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    // Without env permission the variable is treated as unset.
    return undefined;
  }
}

function mayBeLibrary(path: string): boolean {
  if (!path.includes("/")) return true; // a bare name: let the loader search
  try {
    return Deno.statSync(path).isFile;
  } catch (error) {
    // Without read permission on the path, let dlopen decide.
    return !(error instanceof Deno.errors.NotFound);
  }
}

/**
 * `DENO_SQLITE_PATH` as an absolute path, or `undefined` when unset. A relative path (as a
 * user copies it from the build's output) is resolved against the working directory here,
 * once, so that children started elsewhere load the same file.
 */
export function explicitLibraryPath(): string | undefined {
  const value = readEnv("DENO_SQLITE_PATH");
  if (!value || !value.includes("/") || value.startsWith("/")) return value;
  try {
    return `${Deno.cwd()}/${value.replace(/^\.\//, "")}`;
  } catch {
    return value; // without read permission on the working directory, let dlopen decide
  }
}

/** The library paths tried in order: `DENO_SQLITE_PATH`, else the system's. */
export function libraryCandidates(): string[] {
  const explicit = explicitLibraryPath();
  if (explicit) return [explicit];
  return systemLibraryCandidates();
}

function systemLibraryCandidates(): string[] {
  return (SYSTEM_CANDIDATES[Deno.build.os] ?? SYSTEM_CANDIDATES.linux!).filter(mayBeLibrary);
}

/**
 * The system SQLite library's absolute path, whatever `DENO_SQLITE_PATH` says (the
 * matrix and the other tools run it as one library among others).
 *
 * @returns The first system library found, or `undefined`.
 * @example
 * ```ts
 * import { systemLibraryPath } from "./library.ts";
 * console.log(systemLibraryPath() ?? "no system libsqlite3");
 * ```
 */
export function systemLibraryPath(): string | undefined {
  return systemLibraryCandidates().find((path) => path.startsWith("/"));
}

/**
 * What keeps the file at `path` from serving as a SQLite library (it is missing, not a
 * shared library, or a library without SQLite's API), or `undefined` when it loads and
 * answers its version (or when this process may not load libraries). Opened and closed
 * again at once.
 *
 * @param path The library's path.
 * @returns The problem, or `undefined`.
 * @example
 * ```ts
 * import { sqliteLibraryProblem } from "./library.ts";
 * console.log(sqliteLibraryProblem("/etc/hostname")); // "/etc/hostname is not a loadable shared library (…)"
 * ```
 */
export function sqliteLibraryProblem(path: string): string | undefined {
  try {
    const library = Deno.dlopen(path, {
      sqlite3_libversion_number: { parameters: [], result: "i32" },
      sqlite3_open_v2: { parameters: ["buffer", "buffer", "i32", "pointer"], result: "i32" },
    });
    try {
      library.symbols.sqlite3_libversion_number();
    } finally {
      library.close();
    }
    return undefined;
  } catch (error) {
    // Without the permission to load libraries here, the check is left to the loading child.
    if ((error as Error).name === "NotCapable") return undefined;
    return describeLoadFailure(path, error);
  }
}
