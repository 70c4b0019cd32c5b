// The one home of the permission lists children get: the tasks' unscoped set, and the
// narrow set of a crash-test child (read its folders, write its run directory, FFI to
// one library, a list of variables, no run, no network).

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
  /** The one library it may load through FFI; `undefined` for an unscoped `--allow-ffi`. */
  ffi: string | undefined;
  /** The environment variables it may read. */
  env: readonly string[];
}

/**
 * The flags of a crash-test child's scope: `--allow-read`/`--allow-write` to its folders,
 * `--allow-ffi` to its library, `--allow-env` to a list, `--no-prompt`; nothing else.
 *
 * @example
 * ```ts
 * import { scopedPermissions } from "./permissions.ts";
 * const flags = scopedPermissions({ read: ["/tmp/run"], write: "/tmp/run", ffi: "/lib/libsqlite3.so", env: ["HOME"] });
 * console.log(flags.includes("--allow-ffi=/lib/libsqlite3.so")); // true
 * ```
 */
export function scopedPermissions(scope: ChildScope): string[] {
  return [
    "--no-prompt",
    `--allow-read=${[...new Set(scope.read)].join(",")}`,
    `--allow-write=${scope.write}`,
    scope.ffi === undefined ? "--allow-ffi" : `--allow-ffi=${scope.ffi}`,
    `--allow-env=${[...new Set(scope.env)].join(",")}`,
  ];
}
