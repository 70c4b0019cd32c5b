// Spawns a child of the power-loss tier: `spawnChild`'s scoped permissions, plus the
// recording VFS preloaded as the process's default VFS and an unscoped `--allow-ffi`
// (the tier's one widening: UnsafeCallback and pointer views need it). Shared by the
// power-loss cells and the power-loss variant of the crash sweep.
import { type Child, spawnChild, type SpawnOptions } from "../harness/child.ts";

const PRELOAD = new URL("./_power_loss_preload.ts", import.meta.url).href;

/**
 * Spawns `options.script` like `spawnChild` does, with the recording VFS appending to
 * `log` (inside `options.runDir`, the only folder the child may write).
 *
 * @param options Script, arguments, run directory, library, environment, read paths.
 * @param log The VFS log file.
 * @returns The running child.
 */
export function spawnRecordedChild(options: SpawnOptions, log: string): Child {
  return spawnChild({
    ...options,
    env: { SESSION_DB_VFS: "recording", SESSION_DB_VFS_LOG: log, ...options.env },
    preload: PRELOAD,
    unscopedFfi: true,
  });
}
