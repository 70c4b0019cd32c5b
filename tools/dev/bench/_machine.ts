// Facts about the machine the bench runs on: its CPU, its disk's fsync rate, its files.
import { join } from "node:path";

/** The CPU's model and logical core count, from /proc/cpuinfo where it can be read. */
export function cpuModel(): string {
  try {
    const text = Deno.readTextFileSync("/proc/cpuinfo");
    const model = /^model name\s*:\s*(.+)$/m.exec(text)?.[1]?.trim() ?? "unknown";
    const cores = text.match(/^processor\s*:/gm)?.length ?? navigator.hardwareConcurrency;
    return `${model} (${cores} logical cores)`;
  } catch {
    return `unknown (${navigator.hardwareConcurrency} logical cores)`;
  }
}

/** 1-byte writes, each followed by an fsync, for `ms` in `dir`: the rate per second. */
export function fsyncRate(dir: string, ms: number): number {
  const path = join(dir, "fsync.tmp");
  const file = Deno.openSync(path, { create: true, write: true, truncate: true });
  const byte = new Uint8Array([1]);
  let count = 0;
  const started = performance.now();
  let elapsed = 0;
  try {
    while ((elapsed = performance.now() - started) < ms) {
      file.writeSync(byte);
      file.syncSync(); // fsync(2); Deno 2 has no Deno.fsyncSync
      count++;
    }
  } finally {
    file.close();
    Deno.removeSync(path);
  }
  return count / (elapsed / 1000);
}

/** Whether `path` is a folder. */
export function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

/** Whether `path` is a file. */
export function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
