/**
 * Whole process trees: every crash the harness delivers takes a child's whole tree at
 * once (descendants in their own sessions included), nothing started under a run
 * survives it unnoticed, and children die with the process that started them.
 *
 * Two mechanisms, chosen once per process ({@linkcode treeMechanism}):
 *
 * - `cgroup` (where a cgroup v2 hierarchy is writable, e.g. as root): the process moves
 *   itself into a cgroup of its own (its run scope) and puts each spawned child into a
 *   cgroup below it before the child runs any code. A kill freezes the child's cgroup
 *   (`cgroup.freeze`), waits until every member is frozen, then kills it
 *   (`cgroup.kill`); membership survives `setsid`, double forks and dead parents.
 * - `proc` (elsewhere on Linux): each child is a child subreaper (its orphaned
 *   descendants stay below it) and carries a marker in its environment that its
 *   descendants inherit; a kill walks `/proc`, SIGSTOPs every member until no new one
 *   appears, then SIGKILLs them all. A descendant that clears its environment and
 *   outlives the child it came from escapes it.
 *
 * In both, each child gets `PR_SET_PDEATHSIG=SIGKILL` before its script runs, and a
 * watchdog process (in its own session) kills whatever is left of the run's trees the
 * moment the process that started them dies.
 *
 * @example
 * ```ts
 * import { reapRunScope, startRunScope, survivorsMessage } from "./process_tree.ts";
 * startRunScope(); // a tool, before it starts anything
 * // … run the tool's children, await each …
 * const left = await reapRunScope();
 * if (left.length) console.error(survivorsMessage(left, "the run"));
 * ```
 *
 * @module
 */
import { Cgroup } from "./_cgroup.ts";
import { libcPath, type LibcSymbols, sendSignal, SIGNALS } from "./_libc.ts";
import {
  allStats,
  commandLine,
  descendantsIn,
  environValue,
  type ProcStat,
  procStat,
  running,
} from "./_proc.ts";
import {
  envGet,
  pause,
  randomId,
  runScope,
  type Scope,
  SCOPE_ENV,
  type TreeMechanism,
} from "./_run_scope.ts";

export type { TreeMechanism };

/**
 * A process that was still there when its run was over.
 *
 * @example
 * ```ts
 * import type { Survivor } from "./process_tree.ts";
 * const s: Survivor = { pid: 4242, commandLine: "python3 daemon.py" };
 * console.log(`process ${s.pid} survived: ${s.commandLine}`);
 * ```
 */
export interface Survivor {
  /** Its pid. */
  pid: number;
  /** Its command line (empty when it could not be read). */
  commandLine: string;
}

/** The environment variable holding a child's tree settings for its guard. */
export const TREE_ENV = "CELLS_TREE";
/** How long a freeze or a stop may take before the kill goes ahead anyway. */
const FREEZE_DEADLINE_MS = 2_000;
/** How long a killed tree may take to be gone. */
const SETTLE_DEADLINE_MS = 10_000;

/**
 * The mechanism this process uses, and why it is not `cgroup` (set up on first use).
 *
 * @returns The mechanism and, unless it is `cgroup`, the reason.
 * @example
 * ```ts
 * import { treeMechanism } from "./process_tree.ts";
 * const { mechanism, reason } = treeMechanism();
 * console.log(mechanism, reason ?? "");
 * ```
 */
export function treeMechanism(): { mechanism: TreeMechanism; reason?: string } {
  const s = runScope();
  return { mechanism: s.mechanism, ...(s.reason ? { reason: s.reason } : {}) };
}

/**
 * The native libraries the tree machinery loads in this process (libc), for a
 * permission list that narrows `--allow-ffi` (a cell's own permissions).
 *
 * @returns The paths (empty where there is no glibc).
 * @example
 * ```ts
 * import { treeLibraries } from "./process_tree.ts";
 * const ffi = ["/usr/lib/x86_64-linux-gnu/libsqlite3.so.0", ...treeLibraries()];
 * console.log(ffi.length >= 1); // true
 * ```
 */
export function treeLibraries(): string[] {
  const path = libcPath();
  return path ? [path] : [];
}

/**
 * What a child about to be spawned needs to be a tree of its own: the environment for
 * its guard, the extra `--allow-ffi` path (libc), the guard module to `--preload`, and
 * `adopt`, to call with its pid right after the spawn.
 *
 * @returns The child's settings.
 * @example
 * ```ts
 * import { prepareTree } from "./process_tree.ts";
 * const setup = prepareTree();
 * const flags = setup.preload ? [`--preload=${setup.preload}`] : [];
 * console.log(flags.length <= 1); // true
 * ```
 */
export function prepareTree(): {
  env: Record<string, string>;
  ffi: string[];
  preload?: string;
  adopt(pid: number): ProcessTree | undefined;
} {
  const s = runScope();
  if (s.mechanism === "none") return { env: {}, ffi: [], adopt: () => undefined };
  const id = randomId();
  const token = `${s.token}.${id}`;
  // Child cgroups have names without dots (control files have dots).
  const group = s.cgroup ? new Cgroup(s.c!, `${s.cgroup.dir}/tree-${id}`) : undefined;
  if (group) {
    const error = group.create();
    if (error) throw new Error(`Cannot create the cgroup ${group.dir}: errno ${error}`);
  }
  const guard = {
    parent: Deno.pid,
    libc: s.libc,
    token,
    ...(group ? { cgroupDir: group.dir, cgroupPath: `${s.cgroupPath}/tree-${id}` } : {}),
  };
  const markers = envGet(SCOPE_ENV);
  return {
    env: {
      [TREE_ENV]: JSON.stringify(guard),
      [SCOPE_ENV]: markers ? `${markers},${token}` : token,
    },
    ffi: [s.libc!],
    preload: new URL("./_child_guard.ts", import.meta.url).href,
    adopt(pid) {
      if (group) {
        const error = group.adopt(pid);
        if (error) {
          sendSignal(s.c!, pid, SIGNALS.SIGKILL);
          group.remove();
          throw new Error(`Cannot move child ${pid} into the cgroup ${group.dir}: errno ${error}`);
        }
      }
      return new ProcessTree(s, pid, token, group);
    },
  };
}

/** Whether `stat`'s process carries `token` in its marker list. */
function marked(c: LibcSymbols, stat: ProcStat, token: string): boolean {
  const list = environValue(c, stat.pid, SCOPE_ENV);
  return list !== undefined &&
    list.split(",").some((t) => t === token || t.startsWith(`${token}.`));
}

/**
 * The running processes of a `proc` tree or scope: those carrying `token` (only processes
 * started after `since` are read) and every descendant of them and of `roots`.
 */
function procMembers(
  c: LibcSymbols,
  token: string,
  roots: number[],
  since: number,
  exclude: ReadonlySet<number> = new Set(),
): number[] {
  const stats = allStats(c);
  const found = new Set<number>();
  for (const root of roots) if (running(stats.get(root))) found.add(root);
  for (const stat of stats.values()) {
    if (stat.startTime >= since && !exclude.has(stat.pid) && running(stat)) {
      if (marked(c, stat, token)) found.add(stat.pid);
    }
  }
  for (const pid of descendantsIn(stats, [...found, ...roots])) {
    if (running(stats.get(pid)) && !exclude.has(pid)) found.add(pid);
  }
  for (const pid of exclude) found.delete(pid);
  return [...found];
}

/** Waits (bounded) until each pid is stopped or gone. */
function awaitStopped(c: LibcSymbols, pids: number[]): void {
  const end = performance.now() + FREEZE_DEADLINE_MS;
  let left = pids;
  while (left.length && performance.now() < end) {
    left = left.filter((pid) => {
      const stat = procStat(c, pid);
      return running(stat) && stat.state !== "T" && stat.state !== "t";
    });
    if (left.length) pause(1);
  }
}

/** SIGSTOPs `members()` until no new member appears; returns every member stopped. */
function stopAll(c: LibcSymbols, members: () => number[]): number[] {
  const stopped = new Set<number>();
  for (let round = 0; round < 100; round++) {
    const fresh = members().filter((pid) => !stopped.has(pid));
    if (!fresh.length) break;
    for (const pid of fresh) {
      sendSignal(c, pid, SIGNALS.SIGSTOP);
      stopped.add(pid);
    }
    awaitStopped(c, fresh);
  }
  return [...stopped];
}

/**
 * One spawned child's whole tree: the child and everything it started, in its own
 * session or not, orphaned or not.
 *
 * @example
 * ```ts
 * import { spawnChild } from "./child.ts";
 * import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
 * const script = new URL("data:application/typescript,setInterval(()=>{},1000)");
 * const child = spawnChild({ script, runDir: Deno.makeTempDirSync(), library: sqliteLibraryPath() });
 * child.tree?.kill(); // freeze, then SIGKILL, the child and all it started
 * await child.status;
 * console.log((await child.tree?.settle())?.length ?? 0); // 0: nothing survived
 * ```
 */
export class ProcessTree {
  #scope: Scope;
  #group: Cgroup | undefined;
  #token: string;
  #since: number;
  #settled = false;
  /** The pid of the child the tree grew from. */
  readonly root: number;

  /** @internal Use {@linkcode prepareTree}. */
  constructor(s: Scope, root: number, token: string, group: Cgroup | undefined) {
    this.#scope = s;
    this.root = root;
    this.#token = token;
    this.#group = group;
    this.#since = procStat(s.c!, root)?.startTime ?? 0;
  }

  /** The mechanism the tree is kept by. */
  get mechanism(): TreeMechanism {
    return this.#scope.mechanism;
  }

  /** The pids of the tree's processes that can still run (zombies left out). */
  members(): number[] {
    const c = this.#scope.c!;
    if (this.#group) {
      return this.#group.allProcs().filter((pid) => running(procStat(c, pid)));
    }
    return procMembers(c, this.#token, [this.root], this.#since);
  }

  /** Stops every process of the tree (SIGSTOP each), forks racing the stop included. */
  stop(): void {
    const c = this.#scope.c!;
    if (this.#group) {
      this.#freeze();
      const members = this.members();
      for (const pid of members) sendSignal(c, pid, SIGNALS.SIGSTOP);
      this.#group.thaw();
      awaitStopped(c, members);
      return;
    }
    stopAll(c, () => this.members());
  }

  /** Continues every process of the tree (SIGCONT each). */
  resume(): void {
    const c = this.#scope.c!;
    this.#group?.thaw();
    for (const pid of this.members()) sendSignal(c, pid, SIGNALS.SIGCONT);
  }

  /**
   * Freezes the whole tree, then SIGKILLs every process in it: nothing of it runs between
   * the first process's death and the last's.
   */
  kill(): void {
    const c = this.#scope.c!;
    if (this.#group) {
      this.#freeze();
      this.#group.kill();
      return;
    }
    for (const pid of stopAll(c, () => this.members())) sendSignal(c, pid, SIGNALS.SIGKILL);
  }

  #freeze(): void {
    const group = this.#group!;
    if (group.freeze()) return;
    const end = performance.now() + FREEZE_DEADLINE_MS;
    while (!group.frozen() && performance.now() < end) pause(1);
  }

  /**
   * Waits (bounded) until no process of the tree is left, kills again and returns any
   * still there (a survivor), and removes the tree's cgroup. Call it after the child's
   * own status resolved.
   */
  async settle(deadlineMs = SETTLE_DEADLINE_MS): Promise<Survivor[]> {
    if (this.#settled) return [];
    const c = this.#scope.c!;
    const end = performance.now() + deadlineMs;
    let left = this.members();
    while (left.length && performance.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      left = this.members();
    }
    const survivors = left.map((pid) => ({ pid, commandLine: commandLine(c, pid) }));
    if (survivors.length) this.kill();
    if (this.#group) {
      // Zombies not yet reaped keep it populated a moment longer.
      while (this.#group.populated() && performance.now() < end + 1_000) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      this.#group.remove();
    }
    this.#settled = true;
    return survivors;
  }
}

/**
 * Makes this process a run scope (idempotent): everything it starts from now on, at any
 * depth, is found by {@linkcode reapRunScope}, and is killed by a watchdog if this
 * process dies first. A tool calls it before it starts anything; the harness calls it
 * on the first spawned child.
 *
 * @returns The mechanism in use.
 * @example
 * ```ts
 * import { startRunScope } from "./process_tree.ts";
 * console.log(["cgroup", "proc", "none"].includes(startRunScope())); // true
 * ```
 */
export function startRunScope(): TreeMechanism {
  return runScope().mechanism;
}

/**
 * Kills (freeze, then SIGKILL) every process started under this run scope that is still
 * running, except this process and its watchdog, and returns them: a non-empty result
 * is a FAIL naming each. Call it when the run's own children have all been awaited.
 *
 * @param graceMs How long processes that are already ending may take (a watchdog of a
 * test process that just exited, say) before they count as survivors.
 * @returns The survivors (empty under the `none` mechanism, which cannot tell).
 * @example
 * ```ts
 * import { reapRunScope, survivorsMessage } from "./process_tree.ts";
 * const left = await reapRunScope();
 * if (left.length) throw new Error(survivorsMessage(left, "deno task matrix"));
 * ```
 */
export async function reapRunScope(graceMs = 2_000): Promise<Survivor[]> {
  const s = runScope();
  if (s.mechanism === "none") return [];
  const c = s.c!;
  const exclude = new Set([Deno.pid, ...(s.watchdog ? [s.watchdog] : [])]);
  const members = () => {
    const pids = s.cgroup
      ? s.cgroup.allProcs().filter((pid) => running(procStat(c, pid)))
      : procMembers(c, s.token, [Deno.pid], 0, exclude);
    return pids.filter((pid) => !exclude.has(pid));
  };
  const end = performance.now() + graceMs;
  let left = members();
  while (left.length && performance.now() < end) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    left = members();
  }
  const survivors = left.map((pid) => ({ pid, commandLine: commandLine(c, pid) }));
  if (survivors.length) {
    for (const pid of stopAll(c, members)) sendSignal(c, pid, SIGNALS.SIGKILL);
  }
  return survivors;
}

/**
 * One line per survivor, for a FAIL: `process <pid> (<command line>) survived <where>`.
 *
 * @param survivors What {@linkcode reapRunScope} or a tree's `settle` returned.
 * @param where What was over, e.g. `cell 1` or `the matrix`.
 * @returns The message.
 * @example
 * ```ts
 * import { survivorsMessage } from "./process_tree.ts";
 * console.log(survivorsMessage([{ pid: 7, commandLine: "sleep 600" }], "cell 1"));
 * // 1 process survived cell 1 (killed now): pid 7: sleep 600
 * ```
 */
export function survivorsMessage(survivors: readonly Survivor[], where: string): string {
  const n = survivors.length;
  return `${n} process${n === 1 ? "" : "es"} survived ${where} (killed now): ${
    survivors.map((s) => `pid ${s.pid}: ${s.commandLine || "(command line unreadable)"}`)
      .join("; ")
  }`;
}
