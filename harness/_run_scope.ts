// The run scope of a process, set up once on first use: which tree mechanism it uses (a
// cgroup of its own, the `/proc` markers, or none), the cgroup it moved into, the
// watchdog that kills the run's trees when the process dies, and its publication to the
// other isolates of the process (deno test --parallel), which share one scope.
import { Cgroup, EEXIST, ownCgroupDir, ownCgroupPath } from "./_cgroup.ts";
import { libc, libcPath, type LibcSymbols, listDir } from "./_libc.ts";
import { procStat } from "./_proc.ts";
import { AT_START_CWD } from "../internal/start_cwd.ts";

/** The marker list every process of a run inherits (the `proc` mechanism finds them by it). */
export const SCOPE_ENV = "CELLS_SCOPE";
/** Where this process's run scope is recorded, for the other isolates of the process. */
const RUN_SCOPE_ENV = "CELLS_RUN_SCOPE";
/** Forces a mechanism (`proc` or `none`), for tests of the fallbacks. */
const FORCE_ENV = "CELLS_PROCESS_TREE";
/** How long an isolate waits for another one setting up the shared scope. */
const SHARED_SCOPE_MS = 30_000;

/**
 * How this process finds and kills whole trees: a cgroup v2 per child, a walk of
 * `/proc`, or nothing (not Linux, or libc cannot be loaded: kills reach the direct child
 * only).
 *
 * @example
 * ```ts
 * import type { TreeMechanism } from "./process_tree.ts";
 * const strict: TreeMechanism[] = ["cgroup"];
 * ```
 */
export type TreeMechanism = "cgroup" | "proc" | "none";

/** A process's run scope: how it keeps its trees, and what it needs to. */
export interface Scope {
  mechanism: TreeMechanism;
  /** Why not `cgroup` (or why `none`). */
  reason?: string;
  c?: LibcSymbols;
  libc?: string;
  /** This process's marker in `CELLS_SCOPE`. */
  token: string;
  /** The run's cgroup (cgroup mechanism): this process and all it starts. */
  cgroup?: Cgroup;
  /** Its path in the hierarchy, as `/proc/<pid>/cgroup` names it. */
  cgroupPath?: string;
  /** The watchdog's pid. */
  watchdog?: number;
}

let scope: Scope | undefined;

/** Sleeps the thread (the tree operations are synchronous, and bounded). */
export function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A short random id, for tokens and cgroup names. */
export function randomId(): string {
  return crypto.randomUUID().slice(0, 8);
}

/** A variable of the environment, or `undefined` (also where it may not be read). */
export function envGet(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/** The process's run scope, set up on first use. */
export function runScope(): Scope {
  if (scope) return scope;
  const forced = envGet(FORCE_ENV);
  const path = libcPath();
  const c = forced === "none" ? undefined : libc(path);
  if (!c || !path) {
    scope = {
      mechanism: "none",
      token: `${Deno.pid}-${randomId()}`,
      reason: forced === "none"
        ? `${FORCE_ENV}=none`
        : "libc could not be loaded through FFI (not Linux with glibc, or --allow-ffi does not cover it)",
    };
    // Said out loud: a crash then reaches the direct child only.
    console.error(`process trees: none (${scope.reason}): kills reach the direct child only`);
    return scope;
  }
  // Another isolate of this process (deno test --parallel) may have set it up.
  const shared = sharedScope(c);
  if (shared) return scope = shared;
  // One token per process, whichever isolate gets here first: pid and start time.
  const token = `${Deno.pid}-${procStat(c, "self")?.startTime ?? randomId()}`;
  const attempt = forced === "proc"
    ? { mechanism: "proc" as const, reason: `${FORCE_ENV}=proc`, c, libc: path, token }
    : cgroupScope(c, path, token);
  if (attempt === "taken") return scope = awaitSharedScope(c);
  scope = attempt;
  if (scope.mechanism === "proc") {
    // Inherited by every process started from here on (spawnChild passes it on).
    const before = envGet(SCOPE_ENV);
    Deno.env.set(SCOPE_ENV, before ? `${before},${token}` : token);
  }
  scope.watchdog = startWatchdog(scope);
  if (scope.cgroup) {
    // The watchdog must outlive the run's cgroup: it goes back where this process was.
    const outside = scope.cgroup.dir.slice(0, scope.cgroup.dir.lastIndexOf("/"));
    new Cgroup(c, outside).adopt(scope.watchdog);
  }
  Deno.env.set(
    RUN_SCOPE_ENV,
    JSON.stringify({
      pid: Deno.pid,
      mechanism: scope.mechanism,
      ...(scope.reason ? { reason: scope.reason } : {}),
      libc: path,
      token,
      ...(scope.cgroup ? { cgroupDir: scope.cgroup.dir, cgroupPath: scope.cgroupPath } : {}),
      watchdog: scope.watchdog,
    }),
  );
  return scope;
}

/** The scope another isolate of this process published, if any. */
function sharedScope(c: LibcSymbols): Scope | undefined {
  const shared = envGet(RUN_SCOPE_ENV);
  if (!shared) return undefined;
  const saved = JSON.parse(shared) as Omit<Scope, "c" | "cgroup"> & {
    pid: number;
    cgroupDir?: string;
  };
  // Inherited from a parent process: not this process's scope.
  if (saved.pid !== Deno.pid) return undefined;
  const { cgroupDir, pid: _, ...rest } = saved;
  return { ...rest, c, ...(cgroupDir ? { cgroup: new Cgroup(c, cgroupDir) } : {}) };
}

/** Waits (bounded) for the isolate that created the run's cgroup to publish the scope. */
function awaitSharedScope(c: LibcSymbols): Scope {
  const end = performance.now() + SHARED_SCOPE_MS;
  for (;;) {
    const shared = sharedScope(c);
    if (shared) return shared;
    if (performance.now() > end) {
      throw new Error(
        `Cannot set up the run's process trees: another isolate of process ${Deno.pid} ` +
          `created its cgroup and did not publish ${RUN_SCOPE_ENV} within ${SHARED_SCOPE_MS} ms`,
      );
    }
    pause(5);
  }
}

/**
 * Tries the cgroup mechanism: a cgroup of the run's own, with this process in it; or
 * `"taken"` when another isolate of this process is setting it up. Isolates of one
 * process (deno test --parallel) get here on separate threads at once: creating the
 * cgroup, whose name is this process's, is the lock, so that one of them moves the
 * process and all of them use that one cgroup.
 */
function cgroupScope(c: LibcSymbols, path: string, token: string): Scope | "taken" {
  const proc = (reason: string): Scope => ({ mechanism: "proc", reason, c, libc: path, token });
  const name = `cells-${token}`;
  // One read of where the process is: another isolate may move it at any moment.
  const ownPath = ownCgroupPath(c);
  if (ownPath?.endsWith(`/${name}`)) return "taken";
  const own = ownCgroupDir(c, ownPath);
  if (!own || ownPath === undefined) return proc("no cgroup v2 hierarchy is mounted");
  removeStaleRuns(c, own);
  const group = new Cgroup(c, `${own}/${name}`);
  const created = group.createNew();
  if (created === EEXIST) return "taken";
  if (created) return proc(`cannot create a cgroup under ${own} (errno ${created})`);
  if (!group.usable()) {
    group.remove();
    return proc(`the cgroups under ${own} offer no cgroup.freeze and cgroup.kill`);
  }
  const moved = group.adopt(Deno.pid);
  if (moved) {
    group.remove();
    return proc(`cannot move this process into ${group.dir} (errno ${moved})`);
  }
  return {
    mechanism: "cgroup",
    c,
    libc: path,
    token,
    cgroup: group,
    cgroupPath: `${ownPath === "/" ? "" : ownPath}/${name}`,
  };
}

/**
 * Removes the run cgroups beside this one left by runs that are gone: a watchdog killed
 * with its owner leaves them behind, empty. A run's cgroup holds its owner while it
 * lives, so one that is empty and whose owner's pid and start time name no process is
 * stale; any other is left alone.
 */
function removeStaleRuns(c: LibcSymbols, own: string): void {
  for (const name of listDir(c, own) ?? []) {
    const owner = /^cells-(\d+)-(\d+)$/.exec(name);
    if (!owner) continue;
    if (procStat(c, Number(owner[1]))?.startTime === Number(owner[2])) continue;
    const stale = new Cgroup(c, `${own}/${name}`);
    if (!stale.populated()) stale.remove();
  }
}

/** Starts the watchdog: in its own session, it outlives this process by a moment. */
function startWatchdog(s: Scope): number {
  const script = new URL("./_watchdog.ts", import.meta.url);
  const self = procStat(s.c!, "self");
  const config = {
    parent: Deno.pid,
    parentStart: self?.startTime ?? 0,
    libc: s.libc,
    ...(s.cgroup ? { cgroup: s.cgroup.dir } : { token: s.token }),
  };
  const flags = ["run", "--no-config", "--no-lock", "--no-prompt", `--allow-ffi=${s.libc}`];
  if (script.protocol !== "file:") flags.push(`--allow-import=${script.host}`);
  const env: Record<string, string> = {};
  for (const name of ["DENO_DIR", "HOME", "PATH"]) {
    const value = envGet(name);
    if (value !== undefined) env[name] = value;
  }
  const watchdog = new Deno.Command(Deno.execPath(), {
    ...AT_START_CWD,
    args: [...flags, script.href, JSON.stringify(config)],
    clearEnv: true,
    env,
    detached: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  watchdog.unref();
  return watchdog.pid;
}
