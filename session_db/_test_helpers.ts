// Helpers shared by the session_db tests: temporary folders, child processes with an
// explicit environment, and bounded file polling. Not part of the public API.
import { exists } from "../internal/fs.ts";
import { runCommand } from "../internal/command.ts";
import { fromFileUrl } from "../internal/path.ts";

/** Environment variables a child keeps when it runs with a clean environment. */
const KEPT_ENV = [
  "PATH",
  "HOME",
  "TMPDIR",
  "DENO_DIR",
  "XDG_CACHE_HOME",
  "DENO_SQLITE_PATH",
  "NO_COLOR",
];

/**
 * An environment for a child: only the variables it needs to run (and the SQLite
 * library of this process), plus `extra`. Store variables such as
 * `SESSION_DB_JOURNAL_MODE` are absent unless `extra` names them.
 */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of KEPT_ENV) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

/** Output of a finished child. */
export interface ChildResult {
  code: number;
  signal: Deno.Signal | null;
  success: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Runs a Deno script to completion in a child with a clean environment.
 *
 * @param script The script URL.
 * @param args Script arguments.
 * @param options `env`: extra variables; `flags`: permission flags (default `-A`).
 */
export async function runDeno(
  script: URL,
  args: string[],
  options: { env?: Record<string, string>; flags?: string[] } = {},
): Promise<ChildResult> {
  return await runCommand(Deno.execPath(), {
    args: ["run", "--no-lock", ...(options.flags ?? ["-A"]), fromFileUrl(script), ...args],
    env: cleanEnv(options.env),
    clearEnv: true,
  });
}

/**
 * Polls until `path` exists. Fails at once when `exited` settles first (the child
 * died early), and at the deadline otherwise.
 */
export async function waitForFile(
  path: string,
  options: { deadlineMs?: number; exited?: Promise<unknown>; describe?: () => string } = {},
): Promise<void> {
  const deadline = performance.now() + (options.deadlineMs ?? 15_000);
  let gone = false;
  options.exited?.then(() => gone = true, () => gone = true);
  while (!exists(path)) {
    if (gone) {
      throw new Error(
        `Child exited before creating "${path}"${
          options.describe ? `: ${options.describe()}` : ""
        }`,
      );
    }
    if (performance.now() > deadline) {
      throw new Error(`Timed out waiting for "${path}"`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A pid that belonged to a process that has exited and been reaped. */
export async function deadPid(): Promise<number> {
  const child = new Deno.Command("true", { stdout: "null", stderr: "null" }).spawn();
  const pid = child.pid;
  await child.status;
  return pid;
}

/** A fresh temporary folder, removed by the returned disposer. */
export function tempDir(): { path: string } & Disposable {
  const path = Deno.makeTempDirSync({ prefix: "session_db_test_" });
  return {
    path,
    [Symbol.dispose]() {
      Deno.removeSync(path, { recursive: true });
    },
  };
}
