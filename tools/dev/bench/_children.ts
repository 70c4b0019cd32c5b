// Starting the bench's children: the implementations and libraries they run (variants),
// their cleared environment, one-shot jobs, and append children in slices.
import { fixedSqlitePath } from "../../../runner/sqlite_build.ts";
import {
  CONTENT,
  type Impl,
  PYTHON_SCRIPT,
  ROOT,
  SCHEMA_SCRIPT,
  SESSION_ID,
  STORE_SQL,
  WORKER_SCRIPT,
} from "./_config.ts";
import type { AppendJob, Job } from "./_jobs.ts";
import { LiveChild } from "./_protocol.ts";

/** Which SQLite the binding loads in a child: the fixed build, or the system library. */
export type Lib = "fixed" | "system";

/** An implementation on a given library. */
export type VariantKey =
  | "sessiondb"
  | "sessiondb-fixed"
  | "binding"
  | "python"
  | "python-fixed"
  | "python-threads"
  | "python-control"
  | "node";

/** What each variant runs. */
export const VARIANTS: Readonly<
  Record<VariantKey, { impl: Impl; lib?: Lib; idleThreads?: number }>
> = {
  "sessiondb": { impl: "sessiondb", lib: "system" },
  "sessiondb-fixed": { impl: "sessiondb", lib: "fixed" },
  "binding": { impl: "binding", lib: "system" },
  "python": { impl: "python" },
  // Python's sqlite3 on the fixed build (LD_PRELOAD), for a same-version three-way.
  "python-fixed": { impl: "python", lib: "fixed" },
  // Python with as many idle threads as a Deno process runs besides its main thread
  // (2 V8 workers, 3 tokio workers): what the runtime's threads alone cost.
  "python-threads": { impl: "python", idleThreads: 5 },
  // Python again, as a peer of itself: its ratio to "python" is the method's resolution.
  "python-control": { impl: "python" },
  "node": { impl: "node" },
};

/** Our environment without the store's variables; the fixed build's path for `"fixed"`. */
export function childEnv(lib: Lib | undefined): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of ["DENO_SQLITE_PATH", "SESSION_DB_CRASH_AT", "SESSION_DB_JOURNAL_MODE"]) {
    delete env[name];
  }
  if (lib === "fixed") env.DENO_SQLITE_PATH = fixedSqlitePath();
  return env;
}

/** A Python child's environment: the fixed build is preloaded over the system library. */
function pythonEnv(lib: Lib | undefined): Record<string, string> {
  const env = childEnv(undefined);
  if (lib === "fixed") env.LD_PRELOAD = fixedSqlitePath();
  return env;
}

async function spawn(cmd: string, args: string[], env: Record<string, string>): Promise<unknown> {
  const output = await new Deno.Command(cmd, {
    args,
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout).trim();
  const stderr = new TextDecoder().decode(output.stderr).trim();
  if (!output.success) {
    throw new Error(
      `${cmd} ${args.slice(0, 3).join(" ")} ... failed (exit ${output.code}): ${stderr || stdout}`,
    );
  }
  const last = stdout.split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last);
  } catch {
    throw new Error(`${cmd}: no JSON result in its output: ${stdout}\n${stderr}`);
  }
}

/** Runs one job in a Deno child on `lib`; returns its JSON result. */
export function denoChild(job: Job, lib: Lib | undefined): Promise<unknown> {
  return spawn(Deno.execPath(), ["run", "-A", WORKER_SCRIPT, JSON.stringify(job)], childEnv(lib));
}

/** Runs one job in a Python child; returns its JSON result. */
export function pythonChild(job: object): Promise<unknown> {
  return spawn("python3", [PYTHON_SCRIPT, JSON.stringify(job)], childEnv(undefined));
}

/** What an append run varies; the rest of an `AppendJob` is the store's SQL and schema. */
export type AppendOptions = Pick<
  AppendJob,
  "path" | "mode" | "sync" | "n" | "slices" | "batch" | "warmup" | "jitWarmup"
>;

/**
 * Starts one implementation's append child in slices (`AppendJob.slices`), running the
 * store's statements, pragmas and schema.
 *
 * @param variant The implementation and library, e.g. `"sessiondb"` or `"python"`.
 * @param options The file, journal mode, synchronous level and counts.
 * @returns The child; call `ready()`, then `slice(n)` until `n` steps ran, then `finish()`.
 * @example
 * ```ts ignore
 * const child = appendChild("python", { path: "/tmp/a.db", mode: "delete", sync: "EXTRA", n: 4, slices: 2, batch: 1, warmup: 1 });
 * await child.ready();
 * await child.slice(2);
 * await child.slice(2);
 * console.log(await child.finish());
 * ```
 */
export function appendChild(variant: VariantKey, options: AppendOptions): LiveChild {
  const { impl, lib, idleThreads } = VARIANTS[variant];
  const job: AppendJob = {
    kind: "append",
    impl,
    ...options,
    content: CONTENT,
    sessionId: SESSION_ID,
    schema: SCHEMA_SCRIPT,
    sql: STORE_SQL,
    ...(idleThreads ? { idleThreads } : {}),
  };
  return impl === "python"
    ? new LiveChild(variant, "python3", [PYTHON_SCRIPT, JSON.stringify(job)], pythonEnv(lib))
    : new LiveChild(
      variant,
      Deno.execPath(),
      ["run", "-A", WORKER_SCRIPT, JSON.stringify(job)],
      childEnv(lib),
    );
}
