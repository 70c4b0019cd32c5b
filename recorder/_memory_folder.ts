// A folder on a memory file system (Linux's /dev/shm) for work no process outlives: the
// crash states recovered one after another, each written, opened and partly removed again.
// On a disk, every one of those creates allocates an inode, and ext4 without a journal scans
// past every inode freed in the last seconds to find one: thousands per second of states.
import { exists } from "../internal/fs.ts";

const ROOT = "/dev/shm";
const PREFIX = "session-cells-states-";
let swept = false;

/**
 * A new folder under /dev/shm named for this process, or `undefined` where there is none
 * or it cannot be used here (the caller works on its disk folder instead). Folders left
 * by processes that are gone (killed before they removed theirs) are removed first.
 */
export function memoryFolder(): string | undefined {
  if (Deno.build.os !== "linux") return undefined;
  try {
    if (!swept) removeOrphans();
    swept = true;
    return Deno.makeTempDirSync({ dir: ROOT, prefix: `${PREFIX}${Deno.pid}-` });
  } catch {
    return undefined;
  }
}

/** Removes the folders of processes that are gone (done once by the first {@linkcode memoryFolder}). */
export function removeOrphans(): void {
  for (const entry of Deno.readDirSync(ROOT)) {
    const pid = entry.name.startsWith(PREFIX)
      ? /^(\d+)-/.exec(entry.name.slice(PREFIX.length))?.[1]
      : undefined;
    if (!pid || pid === String(Deno.pid)) continue;
    try {
      // A pid in use again keeps its folder: only a folder of no running process goes.
      if (exists(`/proc/${pid}`)) continue;
      Deno.removeSync(`${ROOT}/${entry.name}`, { recursive: true });
    } catch {
      // Not ours to judge (another user's, or /proc unreadable here): left alone.
    }
  }
}
