/**
 * What a target offers, detected before anything runs, through the cells' own leg probe
 * (`cells/engine/probe_store.ts`): the store opened in a child with the cells' scoped permissions
 * (plus what the target declares), its methods, the engine it really runs on read from
 * evidence (its memory map, its file's header), its crash points, and whether the
 * file-system call recorder builds here. A store that cannot open is said with its own
 * error, first; a permission its children lack is said as such.
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
import type { StoreEngine } from "../cells/engine/report.ts";
import { probeStore } from "../cells/engine/probe_store.ts";
import { CELL_METHODS, loadTarget, type StoreMethod } from "../cells/contract/target.ts";
import { declaredPermissions } from "../cells/contract/target_access.ts";
import { widenedFlags } from "../harness/permissions.ts";
import { buildRecorder } from "../recorder/build.ts";
import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
import type { Capabilities } from "./report_schema.ts";

/** The probe once per target and library in this process. */
const probes = new Map<string, ReturnType<typeof probeStore>>();

function probed(target: string, library: string | undefined, deadlineMs: number) {
  const lib = library ?? sqliteLibraryPath();
  const key = `${target}|${lib}|${deadlineMs}`;
  let found = probes.get(key);
  if (!found) {
    found = declaredPermissions(target).then((permissions) =>
      probeStore(target, {
        // The version only names a binding's engine; the memory map says whether it is one.
        leg: { name: "default", library: lib, sqliteVersion: "unknown" },
        openDeadlineMs: deadlineMs,
        ...(permissions ? { permissions } : {}),
      })
    );
    probes.set(key, found);
  }
  return found;
}

/**
 * What the store runs on, and its own error when it cannot open: one probe child.
 *
 * @param target The target specifier.
 * @param library The SQLite library the probe may load (default: this process's).
 * @param deadlineMs How long the store may take to open and write.
 * @returns The engine, and the store's error when it did not open (not when the cells'
 * children were refused a permission it needs: each cell reports that as an ERROR).
 * @example
 * ```ts ignore
 * import { probeEngine } from "./capabilities.ts";
 * const { engine, openError } = await probeEngine("file:///srv/my_target.ts", undefined);
 * console.log(engine.kind, openError ?? "opens");
 * ```
 */
export async function probeEngine(
  target: string,
  library: string | undefined,
  deadlineMs = 30_000,
): Promise<{ engine: StoreEngine; openError?: string }> {
  const probe = await probed(target, library, deadlineMs);
  // A permission the children were refused is not the store's error: each cell's gate
  // reports it as an ERROR naming the declaration.
  const own = probe.openError && !probe.openError.permission;
  return {
    engine: probe.engine,
    ...(own ? { openError: probe.openError!.message } : {}),
  };
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
 * @param library The SQLite library the probe may load (`DENO_SQLITE_PATH`).
 * @param options The open deadline.
 * @returns The capabilities.
 * @example
 * ```ts ignore
 * import { detectCapabilities } from "./capabilities.ts";
 * const caps = await detectCapabilities("file:///srv/my_target.ts", undefined);
 * console.log(Object.keys(caps.cells));
 * ```
 */
export async function detectCapabilities(
  target: string,
  library: string | undefined,
  options: DetectOptions = {},
): Promise<Capabilities> {
  const [probe, recorder, permissions] = await Promise.all([
    probed(target, library, options.openDeadlineMs ?? 30_000),
    buildRecorder(),
    declaredPermissions(target),
  ]);
  const failure = probe.openError;
  const caps: Capabilities = {
    methods: probe.methods,
    cells: {},
    crashPoints: failure ? 0 : (await loadTarget(target)).crashPoints?.().length ?? 0,
    legsHonoured: [],
    legsNotHonoured: [],
    sqliteFile: probe.engine.kind === "binding" || probe.engine.kind === "own-sqlite",
    binding: probe.engine.kind === "binding",
    engine: probe.engine,
    recorder: recorder.ok ? { ok: true } : { ok: false, reason: recorder.reason },
  };
  for (const [id, needs] of Object.entries(CELL_METHODS)) {
    const missing = needs.filter((m: StoreMethod) => !caps.methods.includes(m));
    caps.cells[id] = { available: !failure && missing.length === 0, missing };
  }
  const widened = widenedFlags(permissions);
  if (widened.length) caps.childPermissions = widened;
  if (failure) {
    if (failure.permission === true) {
      // Its message names the permission and the childPermissions declaration to make.
      caps.scopedChildren = failure.message.split("\n")[0]!;
    } else {
      caps.openError = failure.message;
    }
  }
  return caps;
}
