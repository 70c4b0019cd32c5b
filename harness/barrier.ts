import { exists, writeWhole } from "../internal/fs.ts";

/**
 * Releases a file barrier: every child waiting on `path` proceeds.
 *
 * @param path The barrier file.
 * @example
 * ```ts
 * import { releaseBarrier } from "./barrier.ts";
 * releaseBarrier(`${Deno.makeTempDirSync()}/go`);
 * ```
 */
export function releaseBarrier(path: string): void {
  writeWhole(path, "go\n");
}

/**
 * Blocks (child side) until the barrier file exists, polling every `intervalMs`.
 *
 * @param path The barrier file.
 * @param deadlineMs How long to wait.
 * @param intervalMs The poll interval (default 1 ms, so released children start together).
 * @returns `true` when released, `false` at the deadline.
 * @example
 * ```ts
 * import { awaitBarrier, releaseBarrier } from "./barrier.ts";
 * const path = `${Deno.makeTempDirSync()}/go`;
 * releaseBarrier(path);
 * console.log(awaitBarrier(path, 1000)); // true
 * ```
 */
export function awaitBarrier(path: string, deadlineMs: number, intervalMs = 1): boolean {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const end = performance.now() + deadlineMs;
  while (!exists(path)) {
    if (performance.now() >= end) return false;
    Atomics.wait(cell, 0, 0, intervalMs);
  }
  return true;
}

/**
 * Signals (child side) that this child is ready: writes `<dir>/ready-<name>`.
 *
 * @param dir The run directory.
 * @param name This child's name.
 * @example
 * ```ts
 * import { countReady, signalReady } from "./barrier.ts";
 * const runDir = Deno.makeTempDirSync();
 * signalReady(runDir, "claimant-0"); // in the child, once it has opened the store
 * console.log(countReady(runDir)); // 1
 * ```
 */
export function signalReady(dir: string, name: string): void {
  Deno.writeTextFileSync(`${dir}/ready-${name}`, `${Deno.pid}\n`);
}

/**
 * Counts (parent side) the children that signalled ready in `dir`.
 *
 * @param dir The run directory.
 * @returns How many ready files exist.
 * @example
 * ```ts
 * import { countReady, releaseBarrier, signalReady } from "./barrier.ts";
 * const runDir = Deno.makeTempDirSync();
 * for (const name of ["a", "b"]) signalReady(runDir, name); // each child does this
 * if (countReady(runDir) === 2) releaseBarrier(`${runDir}/go`); // all ready: start them together
 * ```
 */
export function countReady(dir: string): number {
  let n = 0;
  for (const entry of Deno.readDirSync(dir)) if (entry.name.startsWith("ready-")) n++;
  return n;
}
