// A store process under the recorder, as F1, F3 and F4 start theirs: every permission
// (Deno passes LD_PRELOAD on to a child only with an unscoped --allow-run), Deno KV's
// switch, and a process tree of its own, so that a stop, a continue or a deadline's
// SIGKILL reaches the process that makes the calls, often a worker the store started.
import { prepareTree, type ProcessTree } from "../../harness/process_tree.ts";

/** A store process: it, and the tree it grows. */
export interface RecordedChild {
  /** The Deno process. */
  process: Deno.ChildProcess;
  /** Its tree (undefined where trees cannot be kept). */
  tree: ProcessTree | undefined;
}

/** Starts `script` with `args` and exactly `env`; stdout piped or dropped. */
export function spawnRecorded(
  script: URL,
  args: readonly string[],
  options: { env: Record<string, string>; stdout: "piped" | "null" },
): RecordedChild {
  const tree = prepareTree();
  const process = new Deno.Command(Deno.execPath(), {
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
 * Awaits the child, killing its tree at the deadline; then kills what outlived it (a
 * worker it left) and waits until the tree is gone.
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
  const output = await process.output();
  clearTimeout(timer);
  if (tree) {
    tree.kill();
    await tree.settle();
  }
  return { output, late };
}
