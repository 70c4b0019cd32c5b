// The one home of the permission lists children get: the tasks' unscoped set, and the
// narrow set of a crash-test child (read its folders, write its run directory, FFI to
// one library, a list of variables, no run unless named programs are declared, no
// network).

/**
 * The permissions of the project's `deno task` entries and of the tools' children that
 * run a task's job (a leg's `deno test`, a sweep shard): everything but the network.
 *
 * @example
 * ```ts
 * import { TASK_PERMISSIONS } from "./permissions.ts";
 * console.log(TASK_PERMISSIONS.includes("--allow-net")); // false
 * ```
 */
export const TASK_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-ffi",
  "--allow-run",
  "--allow-sys",
];

/**
 * Extra permissions a store's children need on top of a crash-test child's narrow scope
 * (a store on an npm package with a native addon, say, or one whose writes a worker
 * process in another language makes): never the network, a shell, an unnamed program or
 * writes outside the run directory. A target declares them (`childPermissions` in
 * `cells/contract/target.ts`); the harness grants exactly these and names them in its reports.
 *
 * @example
 * ```ts
 * import type { ChildPermissions } from "./permissions.ts";
 * const addon: ChildPermissions = {
 *   env: ["LIBSQL_JS_DEV"], // names the children may read (their values pass through)
 *   sys: ["cpus", "hostname"], // or true for every sys API
 *   ffi: ["/root/.cache/deno/npm/registry.npmjs.org/@libsql"], // native code, files or folders
 *   read: ["/root/.cache/deno/npm"], // files or folders
 *   run: ["/usr/bin/python3"], // programs, by absolute path (declared by name or path)
 * };
 * ```
 */
export interface ChildPermissions {
  /** Environment variables the children may read; set ones pass through from the parent. */
  env?: readonly string[];
  /** `true` for every sys API (`--allow-sys`), or the kinds (`--allow-sys=cpus,hostname`). */
  sys?: boolean | readonly string[];
  /** Files or folders the children may load native code from (absolute paths). */
  ffi?: readonly string[];
  /** Files or folders the children may read (absolute paths). */
  read?: readonly string[];
  /**
   * Programs the children may start, by absolute path (a declaration may name them; the
   * harness resolves each on `PATH` and refuses shells).
   */
  run?: readonly string[];
  /**
   * Whether the children may signal processes they did not start (`Deno.kill`, such as a
   * check that a lock's holder is alive). Deno grants that only with an unscoped
   * `--allow-run`, so this grants it.
   */
  signals?: boolean;
}

/**
 * The sys kinds Deno knows (`--allow-sys=<kinds>`); any other fails at launch.
 *
 * @example
 * ```ts
 * import { SYS_KINDS } from "./permissions.ts";
 * console.log(SYS_KINDS.includes("hostname")); // true
 * ```
 */
export const SYS_KINDS: readonly string[] = [
  "hostname",
  "osRelease",
  "osUptime",
  "loadavg",
  "networkInterfaces",
  "systemMemoryInfo",
  "uid",
  "gid",
  "cpus",
  "homedir",
  "statfs",
  "getPriority",
  "setPriority",
  "userInfo",
  "inspector",
];

/** `--allow-sys` for all, `--allow-sys=<kinds>` for some, nothing for none. */
function sysFlag(sys: boolean | readonly string[] | undefined): string[] {
  if (sys === true) return ["--allow-sys"];
  return Array.isArray(sys) && sys.length ? [`--allow-sys=${[...new Set(sys)].join(",")}`] : [];
}

/**
 * The flags that grant extra permissions, one per kind, e.g. for a report: what a
 * store's children got beyond the narrow scope. Empty when nothing is declared.
 *
 * @param permissions The declaration.
 * @returns The flags, e.g. `["--allow-env=LIBSQL_JS_DEV", "--allow-sys"]`.
 * @example
 * ```ts
 * import { widenedFlags } from "./permissions.ts";
 * console.log(widenedFlags({ sys: true, env: ["A", "B"] })); // ["--allow-env=A,B", "--allow-sys"]
 * ```
 */
export function widenedFlags(permissions: ChildPermissions | undefined): string[] {
  const list = (values: readonly string[] | undefined) => [...new Set(values ?? [])].join(",");
  const flags: string[] = [];
  if (permissions?.env?.length) flags.push(`--allow-env=${list(permissions.env)}`);
  flags.push(...sysFlag(permissions?.sys));
  if (permissions?.ffi?.length) flags.push(`--allow-ffi=${pathList(permissions.ffi)}`);
  if (permissions?.read?.length) flags.push(`--allow-read=${pathList(permissions.read)}`);
  if (permissions?.signals) flags.push("--allow-run");
  else if (permissions?.run?.length) flags.push(`--allow-run=${list(permissions.run)}`);
  return flags;
}

/**
 * What a crash-test child may touch.
 *
 * @example
 * ```ts
 * import type { ChildScope } from "./permissions.ts";
 * const scope: ChildScope = { read: ["/tmp/run"], write: "/tmp/run", ffi: undefined, env: [] };
 * ```
 */
export interface ChildScope {
  /** Folders and files it may read. */
  read: readonly string[];
  /** The one folder it may write (its run directory). */
  write: string;
  /**
   * The libraries (files or folders) it may load through FFI; `undefined` for an
   * unscoped `--allow-ffi`.
   */
  ffi: string | readonly string[] | undefined;
  /** The environment variables it may read. */
  env: readonly string[];
  /** Sys APIs: `true` for all, or the kinds; default none. */
  sys?: boolean | readonly string[];
  /** Programs it may start (absolute paths); default none. */
  run?: readonly string[];
  /**
   * Whether its environment holds `LD_PRELOAD` (the file-system call recorder): Deno
   * passes that on to a subprocess only under an unscoped `--allow-run`, so the programs
   * are then granted as `--allow-run`, the one case where the grant is wider than `run`.
   */
  preloaded?: boolean;
  /** Whether it may signal any process: an unscoped `--allow-run` (Deno has no narrower grant). */
  signals?: boolean;
}

/**
 * The flags of a crash-test child's scope: `--allow-read`/`--allow-write` to its folders,
 * `--allow-ffi` to its libraries, `--allow-env` to a list, `--allow-sys` and
 * `--allow-run` only when asked, `--no-prompt`; nothing else.
 *
 * @example
 * ```ts
 * import { scopedPermissions } from "./permissions.ts";
 * const flags = scopedPermissions({ read: ["/tmp/run"], write: "/tmp/run", ffi: "/lib/libsqlite3.so", env: ["HOME"] });
 * console.log(flags.includes("--allow-ffi=/lib/libsqlite3.so")); // true
 * ```
 */
export function scopedPermissions(scope: ChildScope): string[] {
  const ffi = typeof scope.ffi === "string" ? [scope.ffi] : scope.ffi;
  const flags = [
    "--no-prompt",
    `--allow-read=${pathList(scope.read)}`,
    `--allow-write=${pathList([scope.write])}`,
    ffi === undefined ? "--allow-ffi" : `--allow-ffi=${pathList(ffi)}`,
    `--allow-env=${[...new Set(scope.env)].join(",")}`,
  ];
  const run = scope.signals
    ? ["--allow-run"]
    : scope.run?.length
    ? [scope.preloaded ? "--allow-run" : `--allow-run=${[...new Set(scope.run)].join(",")}`]
    : [];
  return [...flags, ...sysFlag(scope.sys), ...run];
}

// The nearest folder Deno can grant for `path`: itself, or, when it holds a comma (Deno
// splits a permission flag's list at every comma and has no escape), the folder above its
// first name holding one: the narrowest grant that still lets the child reach `path`.
function grantablePath(path: string): string {
  const comma = path.indexOf(",");
  if (comma < 0) return path;
  const cut = path.lastIndexOf("/", comma);
  return cut <= 0 ? "/" : path.slice(0, cut);
}

/** A permission flag's list of paths: each one Deno can grant, once. */
function pathList(paths: readonly string[]): string {
  return [...new Set(paths.map(grantablePath))].join(",");
}
