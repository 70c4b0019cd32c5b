// A tier's own child (a leg's `deno test`, a library's share of the sweep) as a process
// tree of its own, so that whatever it started and left running is found when it ends
// (a survivor is a FAIL of that tier, leg and library), and what it found running inside
// itself (its own run scope, reaped at its end) comes back through a file.
import {
  prepareTree,
  type ProcessTree,
  type Survivor,
  survivorsMessage,
  TREE_ENV,
} from "../harness/process_tree.ts";
import type { Outcome, TierName } from "./result.ts";
import { AT_START_CWD } from "../internal/start_cwd.ts";

/** A spawned child and its tree. */
export interface TreeChild {
  /** The child. */
  child: Deno.ChildProcess;
  /** Kills the child and everything it started (freeze, then SIGKILL). */
  kill(): void;
  /** The pids of what still runs in the tree (none where trees cannot be kept). */
  running(): number[];
  /**
   * Call once the child ended: waits (bounded) until nothing of its tree is left, and
   * returns (killed) whatever still runs.
   */
  settle(): Promise<Survivor[]>;
}

/**
 * Spawns `command` as the root of a process tree of its own (a cgroup, or the marker its
 * descendants inherit). No guard is preloaded into it (it may be any program): a process
 * it starts before it is moved into its cgroup stays in ours, where the tool's run scope
 * finds it instead.
 *
 * @param command The program.
 * @param options Its options (`env` gets the tree's markers).
 * @returns The child and how to settle its tree.
 */
export function spawnTree(command: string, options: Deno.CommandOptions): TreeChild {
  const setup = prepareTree();
  // The guard's settings only mean something to a child that preloads the guard.
  const { [TREE_ENV]: _, ...markers } = setup.env;
  const child = new Deno.Command(command, {
    ...AT_START_CWD,
    ...options,
    env: { ...options.env, ...markers },
  }).spawn();
  let tree: ProcessTree | undefined;
  try {
    tree = setup.adopt(child.pid);
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch { /* gone */ }
    throw error;
  }
  return {
    child,
    kill: () => {
      if (tree) tree.kill();
      else {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }
    },
    running: () => tree?.members() ?? [],
    settle: async () => (await tree?.settle()) ?? [],
  };
}

/**
 * Survivors found inside a child by its own end-of-run reap, from the file it wrote
 * (none when it wrote none: it died first, and its tree's settle covers it).
 *
 * @param path The file.
 * @returns The survivors.
 */
export async function survivorsFile(path: string): Promise<Survivor[]> {
  try {
    return JSON.parse(await Deno.readTextFile(path)) as Survivor[];
  } catch {
    return [];
  }
}

/**
 * The FAIL a survivor is: clause `no survivors`, one failed check per process naming its
 * pid and command line.
 *
 * @param survivors What outlived the run (not empty).
 * @param where The tier, leg and library (and the repetition).
 * @returns The outcome.
 */
export function survivorsOutcome(
  survivors: readonly Survivor[],
  where: { tier: TierName; leg: string; library: string; run?: number },
): Outcome {
  return {
    clause: "no survivors",
    ...where,
    status: "FAIL",
    reason: survivorsMessage(
      survivors,
      `the ${where.tier} tier on ${where.leg} × ${where.library}`,
    ),
    checks: survivors.map((s) =>
      `no survivors: pid ${s.pid} (${
        s.commandLine || "command line unreadable"
      }) was still running after the run`
    ),
  };
}
