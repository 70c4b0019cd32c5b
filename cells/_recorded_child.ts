// Spawns a child of the power-loss tier: `spawnChild`'s scoped permissions, plus the
// recording VFS preloaded as the process's default VFS and an unscoped `--allow-ffi`
// (the tier's one widening: UnsafeCallback and pointer views need it). Shared by the
// power-loss cells and the power-loss variant of the crash sweep.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Child,
  CHILD_ENV,
  DEFAULT_IMPORT_HOSTS,
  packageRoot,
  type SpawnOptions,
} from "../harness/child.ts";

const PRELOAD = new URL("./_power_loss_preload.ts", import.meta.url).href;

/**
 * Spawns `options.script` like `spawnChild` does, with the recording VFS appending to
 * `log` (inside `options.runDir`, the only folder the child may write).
 *
 * @param options Script, arguments, run directory, library, environment, read paths.
 * @param log The VFS log file.
 * @returns The running child.
 */
export function spawnRecordedChild(options: SpawnOptions, log: string): Child {
  const script = options.script instanceof URL ? options.script.href : options.script;
  const read = [options.runDir, ...(options.read ?? [])];
  const root = packageRoot();
  if (root) read.push(root);
  if (script.startsWith("file:")) read.push(dirname(fileURLToPath(script)));
  if (PRELOAD.startsWith("file:")) read.push(dirname(fileURLToPath(PRELOAD)));
  const env: Record<string, string> = {
    DENO_SQLITE_PATH: options.library,
    NO_COLOR: "1",
    SESSION_DB_VFS: "recording",
    SESSION_DB_VFS_LOG: log,
    ...options.env,
  };
  const allowEnv = [...new Set([...CHILD_ENV, ...Object.keys(env)])];
  for (const name of ["DENO_DIR", "HOME", "PATH"]) {
    const value = Deno.env.get(name);
    if (value !== undefined && env[name] === undefined) env[name] = value;
  }
  const flags = [
    "run",
    options.config ? `--config=${options.config}` : "--no-config",
    "--no-lock",
    "--no-prompt",
    `--allow-read=${[...new Set(read)].join(",")}`,
    `--allow-write=${options.runDir}`,
    // The tier's one widening: UnsafeCallback and pointer views need an unscoped FFI.
    "--allow-ffi",
    `--allow-env=${allowEnv.join(",")}`,
    `--preload=${PRELOAD}`,
  ];
  if (options.importHosts?.length) {
    const hosts = new Set([...DEFAULT_IMPORT_HOSTS, ...options.importHosts]);
    flags.push(`--allow-import=${[...hosts].join(",")}`);
  }
  const args = [...flags, script, ...(options.args ?? [])];
  const process = new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.runDir,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return new Child(process, [Deno.execPath(), ...args], options.outputLimit ?? 64 * 1024);
}
