/**
 * What a target offers, detected before anything runs: its store opened in a child with
 * the tasks' permissions (methods, crash points, SQLite file, the engine it runs on),
 * again in a child with the cells' scoped permissions (can the cells' children run it?),
 * and whether the file-system call recorder builds here. A store that cannot open is
 * said with its own error, first.
 *
 * @example
 * ```ts ignore
 * import { detectCapabilities } from "./capabilities.ts";
 * const caps = await detectCapabilities("file:///srv/my_target.ts", undefined);
 * console.log(caps.engine.kind, caps.openError ?? "opens");
 * ```
 *
 * @module
 */
import type { StoreEngine } from "../cells/cell_report.ts";
import { CELL_METHODS, type StoreMethod } from "../cells/target.ts";
import { declaredPermissions, targetAccess } from "../cells/target_access.ts";
import { spawnChild } from "../harness/child.ts";
import { widenedFlags } from "../harness/permissions.ts";
import { fromFileUrl } from "../internal/path.ts";
import { buildRecorder } from "../recorder/build.ts";
import type { Capabilities } from "./report_schema.ts";

const PROBE = fromFileUrl(new URL("./_probe_child.ts", import.meta.url));

/** What the probe child found. */
export interface StoreProbe {
  /** Whether the store opened and took a session and an append. */
  ok: boolean;
  /** The step that threw (`openStore`, `createSession`, …). */
  step?: string;
  /** The error's name. */
  name?: string;
  /** The error's first line. */
  message?: string;
  /** The opened store's methods. */
  methods?: string[];
  /** How many crash points the target declares. */
  crashPoints?: number;
  /** Whether `DENO_SQLITE_PATH` was mapped into the process after the open. */
  binding?: boolean;
  /** Whether the store's file starts with the SQLite header. */
  sqliteFile?: boolean;
  /** The SQLite version that last wrote the file (its header). */
  sqliteVersion?: string;
}

/**
 * What the store really runs on, from the probe: the one place the runner decides it
 * (the library axis applies to `binding` only).
 *
 * @param probe The probe's findings.
 * @param library The library the probe loaded.
 * @returns The engine.
 * @example
 * ```ts
 * import { storeEngine } from "./capabilities.ts";
 * console.log(storeEngine({ ok: true, binding: false, sqliteFile: true }).kind); // "own-sqlite"
 * ```
 */
export function storeEngine(probe: StoreProbe, library?: string): StoreEngine {
  if (!probe.ok) return { kind: "unknown" };
  const version = probe.sqliteVersion ? { sqliteVersion: probe.sqliteVersion } : {};
  if (probe.binding) return { kind: "binding", ...version, ...(library ? { library } : {}) };
  return probe.sqliteFile ? { kind: "own-sqlite", ...version } : { kind: "not-sqlite" };
}

/** The store's own error, leading: `openStore threw: Error: boom`. */
function openErrorOf(probe: StoreProbe): string {
  if (probe.name === "Timeout") return probe.message ?? "the store did not open in time";
  if (probe.step === "load the target" || !probe.step) {
    return `${probe.name ?? "Error"}: ${probe.message ?? "the probe failed"}`;
  }
  return `${probe.step} threw: ${probe.name ?? "Error"}: ${probe.message ?? ""}`;
}

/** A refusal for lack of a permission: the child's scope, not the store, is the cause. */
export function isPermissionRefusal(probe: { name?: string; message?: string }): boolean {
  return probe.name === "NotCapable" || probe.name === "PermissionDenied" ||
    /Requires \w+ access/.test(probe.message ?? "");
}

async function readProbe(
  path: string,
  status: { code: number; signal?: Deno.Signal | null },
  stderr: string,
  late?: string,
): Promise<StoreProbe> {
  if (late) return { ok: false, step: "openStore", name: "Timeout", message: late };
  try {
    return JSON.parse(await Deno.readTextFile(path));
  } catch {
    const tail = stderr.trim().split("\n").slice(-3).join(" | ");
    const how = status.signal ? `was killed by ${status.signal}` : `exited ${status.code}`;
    return { ok: false, name: "Error", message: `the probe child ${how}: ${tail}` };
  }
}

/**
 * Opens the store in a child with the tasks' permissions, once, within `deadlineMs`.
 *
 * @param target The target specifier.
 * @param library The SQLite library the probe loads (`DENO_SQLITE_PATH`).
 * @param dir A scratch folder.
 * @param deadlineMs How long the store may take to open and write.
 * @returns The findings.
 */
export async function probeStore(
  target: string,
  library: string | undefined,
  dir: string,
  deadlineMs: number,
): Promise<StoreProbe> {
  const out = `${dir}/probe.json`;
  const child = new Deno.Command(Deno.execPath(), {
    // -A: reading /proc/self/maps needs it (the suite's own probe, not a crash child).
    args: ["run", "--no-lock", "--unstable-kv", "-A", PROBE, target, dir, "full", out],
    env: { ...(library ? { DENO_SQLITE_PATH: library } : {}), NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let late: string | undefined;
  const timer = setTimeout(() => {
    late =
      `openStore did not return within ${deadlineMs} ms (the child was alive at the deadline; raise CELLS_OPEN_DEADLINE_MS for a slow store)`;
    try {
      child.kill("SIGKILL");
    } catch { /* exited meanwhile */ }
  }, deadlineMs);
  const output = await child.output();
  clearTimeout(timer);
  return await readProbe(out, output, new TextDecoder().decode(output.stderr), late);
}

/**
 * What the store runs on, and its own error when it cannot open: one probe child.
 *
 * @param target The target specifier.
 * @param library The SQLite library the probe loads.
 * @param deadlineMs How long the store may take to open and write.
 * @returns The engine, and the store's error when it did not open.
 */
export async function probeEngine(
  target: string,
  library: string | undefined,
  deadlineMs = 30_000,
): Promise<{ engine: StoreEngine; openError?: string }> {
  const dir = await Deno.makeTempDir({ prefix: "engine-probe-" });
  try {
    const probe = await probeStore(target, library, dir, deadlineMs);
    return {
      engine: storeEngine(probe, library),
      ...(probe.ok ? {} : { openError: openErrorOf(probe) }),
    };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** Options of {@linkcode detectCapabilities}. */
export interface DetectOptions {
  /** How long the store may take to open and write (default 30 s). */
  openDeadlineMs?: number;
}

/**
 * Detects the target's capabilities (the legs come later, from the cells tier).
 *
 * @param target The target specifier.
 * @param library The SQLite library the probes load (`DENO_SQLITE_PATH`).
 * @param options The open deadline.
 * @returns The capabilities.
 */
export async function detectCapabilities(
  target: string,
  library: string | undefined,
  options: DetectOptions = {},
): Promise<Capabilities> {
  const dir = await Deno.makeTempDir({ prefix: "conformance-probe-" });
  try {
    const [probe, recorder] = await Promise.all([
      probeStore(target, library, dir, options.openDeadlineMs ?? 30_000),
      buildRecorder(),
    ]);
    const caps: Capabilities = {
      methods: probe.methods ?? [],
      cells: {},
      crashPoints: probe.crashPoints ?? 0,
      legsHonoured: [],
      legsNotHonoured: [],
      sqliteFile: probe.sqliteFile ?? false,
      binding: probe.binding ?? false,
      engine: storeEngine(probe, library),
      recorder: recorder.ok ? { ok: true } : { ok: false, reason: recorder.reason },
    };
    for (const [id, needs] of Object.entries(CELL_METHODS)) {
      const missing = needs.filter((m: StoreMethod) => !caps.methods.includes(m));
      caps.cells[id] = { available: probe.ok && missing.length === 0, missing };
    }
    if (!probe.ok) {
      caps.openError = openErrorOf(probe);
      return caps;
    }
    const permissions = await declaredPermissions(target);
    const widened = widenedFlags(permissions);
    if (widened.length) caps.childPermissions = widened;
    const scoped = await scopedProbe(
      target,
      library,
      dir,
      permissions,
      options.openDeadlineMs ?? 30_000,
    );
    if (!scoped.ok && isPermissionRefusal(scoped)) {
      caps.scopedChildren =
        `the store needs permissions the cells' children do not get (declare them in the target's childPermissions, see cells/target.ts): ${scoped.message}`;
    }
    return caps;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/** The probe again under the cells' children's permissions (plus what the target declares). */
async function scopedProbe(
  target: string,
  library: string | undefined,
  dir: string,
  permissions: Awaited<ReturnType<typeof declaredPermissions>>,
  deadlineMs: number,
): Promise<StoreProbe> {
  const scopedDir = await Deno.makeTempDir({ dir, prefix: "scoped-" });
  const access = targetAccess(target);
  const out = `${scopedDir}/probe.json`;
  const child = spawnChild({
    script: PROBE,
    args: [target, scopedDir, "scoped", out],
    runDir: scopedDir,
    library: library ?? "",
    read: access.read ?? [],
    importHosts: access.importHosts ?? [],
    ...(access.config ? { config: access.config } : {}),
    ...(permissions ? { permissions } : {}),
  });
  let late: string | undefined;
  const timer = setTimeout(() => {
    late =
      `openStore did not return within ${deadlineMs} ms under the cells' permissions (the child was alive at the deadline)`;
    child.signal("SIGKILL");
  }, deadlineMs);
  const status = await child.status;
  clearTimeout(timer);
  return await readProbe(out, status, child.stderr, late);
}
