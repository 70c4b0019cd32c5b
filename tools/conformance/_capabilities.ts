// Capabilities detected from the target: its store opened in a child with the tasks'
// permissions (methods, crash points, SQLite file, this project's binding), again in a
// child with the cells' scoped permissions (can the cells' children run it?), and
// whether the file-system call recorder builds here.
import { CELL_METHODS, type StoreMethod } from "../../cells/target.ts";
import { declaredPermissions, targetAccess } from "../../cells/target_access.ts";
import { spawnChild } from "../../harness/child.ts";
import { widenedFlags } from "../../harness/permissions.ts";
import { fromFileUrl } from "../../internal/path.ts";
import { buildRecorder } from "../../recorder/build.ts";
import type { Capabilities } from "./_schema.ts";

const PROBE = fromFileUrl(new URL("./_probe_child.ts", import.meta.url));

interface ProbeOutput {
  ok: boolean;
  name?: string;
  message?: string;
  methods?: string[];
  crashPoints?: number;
  binding?: boolean;
  sqliteFile?: boolean;
}

function parseProbe(stdout: string, stderr: string, code: number): ProbeOutput {
  try {
    return JSON.parse(stdout.trim().split("\n").at(-1) ?? "");
  } catch {
    const tail = stderr.trim().split("\n").slice(-3).join(" | ");
    return { ok: false, name: "Error", message: `the probe child exited ${code}: ${tail}` };
  }
}

/** A refusal for lack of a permission: the child's scope, not the store, is the cause. */
export function isPermissionRefusal(probe: { name?: string; message?: string }): boolean {
  return probe.name === "NotCapable" || probe.name === "PermissionDenied" ||
    /Requires \w+ access/.test(probe.message ?? "");
}

/**
 * Detects the target's capabilities (the legs come later, from the cells tier).
 *
 * @param target The target specifier.
 * @param library The SQLite library the probes load (`DENO_SQLITE_PATH`).
 */
export async function detectCapabilities(target: string, library: string): Promise<Capabilities> {
  const dir = await Deno.makeTempDir({ prefix: "conformance-probe-" });
  try {
    const full = await new Deno.Command(Deno.execPath(), {
      // -A: reading /proc/self/maps needs it (the tool's own probe; syscalls.ts does the same).
      args: ["run", "--no-lock", "--unstable-kv", "-A", PROBE, target, dir, "full"],
      env: { DENO_SQLITE_PATH: library, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    const probe = parseProbe(dec.decode(full.stdout), dec.decode(full.stderr), full.code);
    const recorder = await buildRecorder();
    const caps: Capabilities = {
      methods: probe.methods ?? [],
      cells: {},
      crashPoints: probe.crashPoints ?? 0,
      legsHonoured: [],
      legsNotHonoured: [],
      sqliteFile: probe.sqliteFile ?? false,
      binding: probe.binding ?? false,
      recorder: recorder.ok ? { ok: true } : { ok: false, reason: recorder.reason },
    };
    for (const [id, needs] of Object.entries(CELL_METHODS)) {
      const missing = needs.filter((m: StoreMethod) => !caps.methods.includes(m));
      caps.cells[id] = { available: probe.ok && missing.length === 0, missing };
    }
    if (!probe.ok) {
      caps.unavailable = `the store cannot be opened here: ${probe.name}: ${probe.message}`;
      return caps;
    }
    const scopedDir = await Deno.makeTempDir({ dir, prefix: "scoped-" });
    const access = targetAccess(target);
    const permissions = await declaredPermissions(target);
    const widened = widenedFlags(permissions);
    if (widened.length) caps.childPermissions = widened;
    const child = spawnChild({
      script: PROBE,
      args: [target, scopedDir, "scoped"],
      runDir: scopedDir,
      library,
      read: access.read ?? [],
      importHosts: access.importHosts ?? [],
      ...(access.config ? { config: access.config } : {}),
      ...(permissions ? { permissions } : {}),
    });
    const status = await child.status;
    const scoped = parseProbe(child.stdout, child.stderr, status.code);
    if (!scoped.ok && isPermissionRefusal(scoped)) {
      caps.scopedChildren =
        `the store needs permissions the cells' children do not get (declare them in the target's childPermissions, see cells/target.ts): ${scoped.message}`;
    }
    return caps;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
