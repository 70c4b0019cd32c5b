/**
 * A store process under the file-system call recorder, as the fault tier and the
 * recorded-call sweep under faults start theirs: every permission (Deno passes
 * LD_PRELOAD on to a child only with an unscoped --allow-run), Deno KV's switch, and a
 * process tree of its own, so that a stop, a continue or a deadline's SIGKILL reaches the
 * process that makes the calls, often a worker the store started.
 *
 * @example
 * ```ts ignore
 * import { endWithin, spawnRecorded } from "./recorded_child.ts";
 * const child = spawnRecorded(new URL("./child.ts", import.meta.url), ["a"], {
 *   env: { PATH: "/usr/bin" },
 *   stdout: "null",
 * });
 * const { output, late } = await endWithin(child, 20_000);
 * console.log(output.code, late);
 * ```
 *
 * @module
 */
import { prepareTree, type ProcessTree } from "./process_tree.ts";
import { type Leg, legEnv } from "./legs.ts";
import { AT_START_CWD } from "../internal/start_cwd.ts";
import { childOutput } from "../internal/child_output.ts";

/**
 * The whole environment of a store process on a leg: this process's, the leg's journal
 * mode and library, no crash point, no preload but the `recorder`'s variables (none: a
 * process the recorder does not watch).
 *
 * @param leg The leg (its journal mode and SQLite library).
 * @param recorder The recorder's variables (`recorderEnv`), or `{}`.
 * @returns The variables.
 * @example
 * ```ts ignore
 * import { recordedEnv } from "./recorded_child.ts";
 * import { currentLeg } from "./legs.ts";
 * console.log(recordedEnv(currentLeg(), {}).DENO_SQLITE_PATH);
 * ```
 */
export function recordedEnv(
  leg: Pick<Leg, "name" | "library">,
  recorder: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string> = { ...Deno.env.toObject(), NO_COLOR: "1" };
  delete env.SESSION_DB_CRASH_AT;
  delete env.SESSION_DB_JOURNAL_MODE;
  delete env.LD_PRELOAD;
  return { ...env, ...legEnv(leg), DENO_SQLITE_PATH: leg.library, ...recorder };
}

/**
 * A store process: it, and the tree it grows.
 *
 * @example
 * ```ts ignore
 * import type { RecordedChild } from "./recorded_child.ts";
 * declare const child: RecordedChild;
 * console.log(child.process.pid, child.tree !== undefined);
 * ```
 */
export interface RecordedChild {
  /** The Deno process. */
  process: Deno.ChildProcess;
  /** Its tree (undefined where trees cannot be kept). */
  tree: ProcessTree | undefined;
}

/**
 * Starts `script` with `args` and exactly `env`, in a process tree of its own.
 *
 * @param script The Deno script.
 * @param args Its arguments.
 * @param options Its whole environment, and whether its stdout is piped or dropped.
 * @returns The process and its tree.
 * @example
 * ```ts ignore
 * import { spawnRecorded } from "./recorded_child.ts";
 * const child = spawnRecorded(new URL("./child.ts", import.meta.url), [], {
 *   env: {},
 *   stdout: "piped",
 * });
 * console.log(child.process.pid);
 * ```
 */
export function spawnRecorded(
  script: URL,
  args: readonly string[],
  options: { env: Record<string, string>; stdout: "piped" | "null" },
): RecordedChild {
  const tree = prepareTree();
  const process = new Deno.Command(Deno.execPath(), {
    ...AT_START_CWD,
    args: [
      "run",
      "--no-lock",
      "-A",
      "--unstable-kv",
      ...(tree.preload ? [`--preload=${tree.preload}`] : []),
      script.href,
      ...args,
    ],
    env: { ...options.env, ...tree.env },
    clearEnv: true,
    stdout: options.stdout,
    stderr: "piped",
  }).spawn();
  return { process, tree: tree.adopt(process.pid) };
}

/**
 * Awaits the child, killing its tree at the deadline; at its exit kills what outlived it
 * (a worker it left, which would hold its pipes open) and waits until the tree is gone.
 *
 * @param child The child {@linkcode spawnRecorded} started.
 * @param deadlineMs How long it may run.
 * @returns Its output, and whether the deadline killed it.
 * @example
 * ```ts ignore
 * import { endWithin, spawnRecorded } from "./recorded_child.ts";
 * const child = spawnRecorded(new URL("./child.ts", import.meta.url), [], {
 *   env: {},
 *   stdout: "null",
 * });
 * console.log((await endWithin(child, 5_000)).late);
 * ```
 */
export async function endWithin(
  child: RecordedChild,
  deadlineMs: number,
): Promise<{ output: Deno.CommandOutput; late: boolean }> {
  const { process, tree } = child;
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    tree?.kill();
    try {
      process.kill("SIGKILL");
    } catch { /* ended meanwhile */ }
  }, deadlineMs);
  const output = await childOutput(process, { onExit: () => tree?.kill() });
  clearTimeout(timer);
  await tree?.settle();
  return { output, late };
}
