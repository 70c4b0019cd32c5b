// What a child needs to load a target module: read access to its folder (and the import map
// of its project), or the host it is imported from; and the extra permissions the target
// declares for its children.
import { dirname, fromFileUrl } from "../../internal/path.ts";
import type { SpawnOptions } from "../../harness/child.ts";
import { type ChildPermissions, SYS_KINDS } from "../../harness/permissions.ts";
import { denoCacheDir } from "../../recorder/record.ts";
import { loadTarget, type PermissionContext, TargetError } from "./target.ts";

/**
 * The `deno.json(c)` nearest above a target's folder: its import map is what the
 * target's bare specifiers resolve through, in the children as in the project.
 */
function nearestConfig(dir: string): string | undefined {
  for (let current = dir;; current = dirname(current)) {
    for (const name of ["deno.json", "deno.jsonc"]) {
      const path = `${current}/${name}`;
      try {
        if (Deno.statSync(path).isFile) return path;
      } catch {
        // Missing or unreadable: keep looking further up.
      }
    }
    if (dirname(current) === current) return undefined;
  }
}

/**
 * Read access a child needs for the target module: its folder (and the nearest
 * `deno.json`, whose import map its bare specifiers resolve through) when it is a file,
 * the host it is imported from when it is remote.
 *
 * @example
 * ```ts
 * import { targetAccess } from "./target_access.ts";
 * console.log(targetAccess("https://example.com/store.ts")); // { importHosts: ["example.com"] }
 * ```
 */
export function targetAccess(target: string): Partial<SpawnOptions> {
  const url = new URL(target);
  if (url.protocol === "file:") {
    const dir = dirname(fromFileUrl(url));
    const config = nearestConfig(dir);
    return { read: [dir], ...(config ? { config } : {}) };
  }
  if (url.protocol === "http:" || url.protocol === "https:") return { importHosts: [url.host] };
  return {};
}

const KEYS = ["env", "sys", "ffi", "read", "run", "signals"] as const;
const NEVER: Readonly<Record<string, string>> = {
  net: "the cells never grant the network",
  write: "the children write only their run folder",
  import: "remote imports follow the target's own host",
};

/**
 * Programs never granted: shells and launchers, which would run anything by name and so
 * grant every program unnamed.
 */
const SHELLS = new Set([
  "sh",
  "bash",
  "rbash",
  "dash",
  "zsh",
  "ksh",
  "mksh",
  "pdksh",
  "csh",
  "tcsh",
  "fish",
  "ash",
  "yash",
  "busybox",
  "env",
]);

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The executable file `name` resolves to on `PATH`, or `undefined`. */
function onPath(name: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir.startsWith("/")) continue;
    try {
      const info = Deno.statSync(`${dir}/${name}`);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111)) return `${dir}/${name}`;
    } catch {
      // Not there: the next folder.
    }
  }
  return undefined;
}

/** The declared programs, resolved to absolute paths, and those not found on this machine. */
interface Programs {
  run: string[];
  missing: string[];
}

/** Resolves a `run` declaration; throws on a shell or a relative path. */
function resolvePrograms(
  declared: readonly string[],
  bad: (problem: string, fix: string) => TargetError,
): Programs {
  const out: Programs = { run: [], missing: [] };
  for (const name of declared) {
    if (name.includes("/") && !name.startsWith("/")) {
      throw bad(
        `run entry "${name}" is a relative path`,
        "name a program on PATH or give its absolute path",
      );
    }
    const path = name.startsWith("/") ? name : onPath(name);
    let real = path;
    try {
      if (path) real = Deno.realPathSync(path);
    } catch {
      real = undefined;
    }
    for (const candidate of [name, path, real]) {
      if (candidate && SHELLS.has(basename(candidate))) {
        throw bad(
          `run entry "${name}" is a shell or a launcher (${
            basename(candidate)
          }), which would run any program unnamed`,
          'name each program the store starts, e.g. run: ["python3"]',
        );
      }
    }
    if (path && real) out.run.push(path);
    else out.missing.push(name);
  }
  return out;
}

/** `true` unless `value` is a list of non-empty strings without commas, each passing `valid`. */
function badList(value: unknown, valid: (item: string) => boolean): boolean {
  return !Array.isArray(value) ||
    value.some((item) => typeof item !== "string" || !item || item.includes(",") || !valid(item));
}

/**
 * Checks a `childPermissions` declaration; returns it typed (its programs resolved) and
 * the programs not found, or throws naming the problem.
 */
function parseDeclaration(
  specifier: string,
  value: unknown,
): { permissions: ChildPermissions; missing: string[] } {
  const bad = (problem: string, fix: string) =>
    new TargetError(
      `Invalid childPermissions in target module "${specifier}": ${problem} (${fix})`,
    );
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw bad(
      `expected an object, got ${Array.isArray(value) ? "an array" : typeof value}`,
      "export { env?, sys?, ffi?, read?, run?, signals? } or a function of the context returning one",
    );
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (NEVER[key]) throw bad(`"${key}" cannot be declared: ${NEVER[key]}`, `remove "${key}"`);
    if (!(KEYS as readonly string[]).includes(key)) {
      throw bad(`unknown permission "${key}"`, `use ${KEYS.join(", ")}`);
    }
  }
  if (record.env !== undefined && badList(record.env, (n) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(n))) {
    throw bad("env must be a list of variable names", 'e.g. env: ["MY_STORE_KEY"]');
  }
  const sys = record.sys;
  if (sys !== undefined && typeof sys !== "boolean" && badList(sys, (k) => SYS_KINDS.includes(k))) {
    throw bad(
      `sys must be true, false or a list of sys kinds, got ${JSON.stringify(sys)}`,
      `use true or some of ${SYS_KINDS.join(", ")}`,
    );
  }
  if (record.signals !== undefined && typeof record.signals !== "boolean") {
    throw bad(
      `signals must be true or false, got ${JSON.stringify(record.signals)}`,
      "signals: true when the store signals other processes (Deno.kill)",
    );
  }
  for (const key of ["ffi", "read"] as const) {
    if (record[key] !== undefined && badList(record[key], (p) => p.startsWith("/"))) {
      throw bad(
        `${key} must be a list of absolute paths, got ${JSON.stringify(record[key])}`,
        "resolve them from the context, e.g. `${npmCache}/registry.npmjs.org/<package>`",
      );
    }
  }
  if (record.run === undefined) return { permissions: record as ChildPermissions, missing: [] };
  if (badList(record.run, () => true)) {
    throw bad(
      `run must be a list of program names or absolute paths, got ${JSON.stringify(record.run)}`,
      'e.g. run: ["python3"]',
    );
  }
  const programs = resolvePrograms(record.run as string[], bad);
  const { run: _, ...rest } = record as ChildPermissions;
  return {
    permissions: { ...rest, ...(programs.run.length ? { run: programs.run } : {}) },
    missing: programs.missing,
  };
}

/** The run's context for a declaration: Deno's cache folders. */
function permissionContext(): PermissionContext {
  const denoDir = denoCacheDir();
  return { denoDir, npmCache: `${denoDir}/npm` };
}

const declared = new Map<
  string,
  Promise<{ permissions: ChildPermissions; missing: string[] } | undefined>
>();

/** The declaration of `target`, parsed once. */
function declaration(
  target: string,
): Promise<{ permissions: ChildPermissions; missing: string[] } | undefined> {
  let result = declared.get(target);
  if (!result) {
    result = (async () => {
      // Typed on the target's side (ChildPermissionsDeclaration in target.ts), checked here.
      const module = await loadTarget(target) as { childPermissions?: unknown };
      const declaration = module.childPermissions;
      if (declaration === undefined) return undefined;
      let value: unknown = declaration;
      if (typeof declaration === "function") {
        try {
          value = (declaration as (context: PermissionContext) => unknown)(permissionContext());
        } catch (error) {
          throw new TargetError(
            `Invalid childPermissions in target module "${target}": the function threw: ${
              error instanceof Error ? error.message : String(error)
            } (return the permissions from the context without other access)`,
            { cause: error },
          );
        }
      }
      return parseDeclaration(target, value);
    })();
    declared.set(target, result);
  }
  return result;
}

/**
 * The extra permissions a target declares for its children (`childPermissions`),
 * checked and resolved against this run's {@linkcode PermissionContext}; `undefined`
 * when it declares none. Call it in the parent (it reads the environment), once per
 * target: the result is kept.
 *
 * @param target The target specifier.
 * @returns The permissions, or `undefined`.
 * @throws {TargetError} When the module cannot load or the declaration is bad.
 * @example
 * ```ts
 * import { declaredPermissions } from "./target_access.ts";
 * const target = new URL("../reference_target.ts", import.meta.url).href;
 * console.log(await declaredPermissions(target)); // undefined: the reference needs nothing more
 * ```
 */
export async function declaredPermissions(
  target: string,
): Promise<ChildPermissions | undefined> {
  return (await declaration(target))?.permissions;
}

/**
 * The programs a target declares (`childPermissions.run`) that this machine does not
 * have: its cells cannot be judged here, so they SKIP with them named (never PASS).
 *
 * @param target The target specifier.
 * @returns The names not found (empty when all were, or none is declared).
 * @throws {TargetError} When the module cannot load or the declaration is bad.
 * @example
 * ```ts
 * import { missingPrograms } from "./target_access.ts";
 * const target = new URL("../reference_target.ts", import.meta.url).href;
 * console.log(await missingPrograms(target)); // []
 * ```
 */
export async function missingPrograms(target: string): Promise<string[]> {
  return (await declaration(target))?.missing ?? [];
}
