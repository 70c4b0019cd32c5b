/**
 * A peer in another language: a session store written in Python on the standard
 * library's `sqlite3` (`worker.py`), whose every write its worker process makes. The
 * Deno side is the generic client of the worker line protocol (`worker_client.ts`,
 * `docs/worker_protocol.md`); the cells grant the children exactly the Python
 * interpreter (`childPermissions.run`) and kill the worker with them (its process tree).
 * Where Python 3 is missing, every cell SKIPs naming it.
 *
 * The worker runs on the leg's SQLite library when one is given (`DENO_SQLITE_PATH`): it
 * starts itself again with the library preloaded, so the library axis applies to it.
 *
 * @example
 * ```ts
 * import { openStore } from "./target.ts";
 * const store = await openStore(`${Deno.makeTempDirSync()}/store.db`, { journalMode: "delete" });
 * await store.createSession("s1");
 * await store.close();
 * ```
 *
 * @module
 */
import { fromFileUrl } from "../../internal/path.ts";
import type { ChildPermissions, StoreOptions } from "../../cells/contract/target.ts";
import { openWorkerStore, type WorkerStore } from "./worker_client.ts";

export type { WorkerStore };

/** The variable through which the children learn the interpreter the parent resolved. */
const PYTHON_ENV = "CELLS_PYTHON3";

function envGet(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined; // not granted: not set for us
  }
}

/** The worker script: a file next to this module (a URL import has none to run). */
function workerScript(): string {
  const url = new URL("./worker.py", import.meta.url);
  if (url.protocol !== "file:") {
    throw new Error(
      `Cannot start the Python worker from ${url.href}: it must be a local file (run the suite from a copy of the repository)`,
    );
  }
  return fromFileUrl(url);
}

/**
 * The interpreter the children may run: `python3` on PATH, resolved to the real
 * executable (not a version manager's shim, a script), checked to have `sqlite3`.
 * Resolved in the parent; passed on to the children in `CELLS_PYTHON3`. Without one,
 * `python3` is declared as is and the cells SKIP, naming it.
 *
 * @returns The declaration.
 */
export function childPermissions(): ChildPermissions {
  let executable: string | undefined;
  try {
    const output = new Deno.Command("python3", {
      args: ["-I", "-c", "import sqlite3, sys; print(sys.executable)"],
      stdin: "null",
      stderr: "null",
    }).outputSync();
    const path = new TextDecoder().decode(output.stdout).trim();
    if (output.success && path.startsWith("/")) executable = path;
  } catch {
    // No python3 on PATH: declared by name below, so the cells SKIP naming it.
  }
  if (executable) Deno.env.set(PYTHON_ENV, executable);
  return { run: [executable ?? "python3"], env: [PYTHON_ENV] };
}

/**
 * Opens the store: starts `worker.py` and opens the database in the leg's mode.
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @returns The store its worker serves.
 */
export function openStore(path: string, options: StoreOptions): Promise<WorkerStore> {
  return openPythonStore(path, options);
}

/**
 * {@linkcode openStore} with extra worker arguments (the suite's mutants pass
 * `--mutant <name>`) and, optionally, the worker in a session of its own.
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @param worker Arguments after the script's, and whether to start the worker with `setsid`.
 * @returns The store.
 */
export function openPythonStore(
  path: string,
  options: StoreOptions,
  worker: { extra?: readonly string[]; detached?: boolean } = {},
): Promise<WorkerStore> {
  const { extra = [], detached = false } = worker;
  const library = envGet("DENO_SQLITE_PATH");
  return openWorkerStore(
    {
      program: envGet(PYTHON_ENV) ?? "python3",
      args: [
        "-I",
        workerScript(),
        ...(library ? ["--sqlite-library", library] : []),
        ...extra,
      ],
      detached,
    },
    path,
    options,
  );
}
