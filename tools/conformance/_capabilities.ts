// Capabilities detected from the target: its store opened by the leg probe
// (cells/probe_store.ts) in a child with the cells' scoped permissions (methods, the
// engine it runs on read from evidence, a permission it lacks), its crash points, and
// whether the file-system call recorder builds here.
import { probeStore } from "../../cells/probe_store.ts";
import { CELL_METHODS, loadTarget, type StoreMethod } from "../../cells/target.ts";
import { declaredPermissions } from "../../cells/target_access.ts";
import { widenedFlags } from "../../harness/permissions.ts";
import { buildRecorder } from "../../recorder/build.ts";
import type { Capabilities } from "./_schema.ts";

/** A refusal for lack of a permission: the child's scope, not the store, is the cause. */
export function isPermissionRefusal(probe: { name?: string; message?: string }): boolean {
  return probe.name === "NotCapable" || probe.name === "PermissionDenied" ||
    /Requires \w+ access/.test(probe.message ?? "");
}

/**
 * Detects the target's capabilities (the legs come later, from the cells tier).
 *
 * @param target The target specifier.
 * @param library The SQLite library the probe's child may load (`DENO_SQLITE_PATH`).
 */
export async function detectCapabilities(target: string, library: string): Promise<Capabilities> {
  const permissions = await declaredPermissions(target);
  const probe = await probeStore(target, {
    // The version only names a binding's engine; the map says whether it is one.
    leg: { name: "default", library, sqliteVersion: "unknown" },
    ...(permissions ? { permissions } : {}),
  });
  const recorder = await buildRecorder();
  const failure = probe.openError;
  const caps: Capabilities = {
    methods: probe.methods,
    cells: {},
    crashPoints: failure ? 0 : (await loadTarget(target)).crashPoints?.().length ?? 0,
    legsHonoured: [],
    legsNotHonoured: [],
    sqliteFile: probe.engine.kind === "binding" || probe.engine.kind === "own-sqlite",
    binding: probe.engine.kind === "binding",
    recorder: recorder.ok ? { ok: true } : { ok: false, reason: recorder.reason },
  };
  for (const [id, needs] of Object.entries(CELL_METHODS)) {
    const missing = needs.filter((m: StoreMethod) => !caps.methods.includes(m));
    caps.cells[id] = { available: !failure && missing.length === 0, missing };
  }
  const widened = widenedFlags(permissions);
  if (widened.length) caps.childPermissions = widened;
  if (failure) {
    const lead = failure.message.split("\n")[0]!;
    if (failure.permission || isPermissionRefusal({ message: lead })) {
      caps.scopedChildren =
        `the store needs permissions the cells' children do not get (declare them in the target's childPermissions, see cells/target.ts): ${lead}`;
    } else {
      caps.unavailable = `the store cannot be opened here: ${lead}`;
    }
  }
  return caps;
}
