// The JSON-lines log opened with O_DSYNC through `node:fs` (Deno's own open takes no such
// flag): every write returns once its data is durable, so the store's syncs of it are
// no-ops. The lock is taken on a second, read-only handle of the same file.
import fs from "node:fs";
import type { LogFile } from "./jsonl_store.ts";

/** A log file whose writes are synchronous (`O_DSYNC`), with no sync calls. */
export class DsyncFile implements LogFile {
  #fd: number;
  #lock: Deno.FsFile;

  /** Opens (creating) `path` for appending with `O_DSYNC`. */
  constructor(path: string) {
    const { O_RDWR, O_APPEND, O_CREAT, O_DSYNC } = fs.constants;
    this.#fd = fs.openSync(path, O_RDWR | O_APPEND | O_CREAT | O_DSYNC, 0o600);
    this.#lock = Deno.openSync(path, { read: true });
  }

  writeSync(bytes: Uint8Array): number {
    return fs.writeSync(this.#fd, bytes);
  }

  /** A size change is not a write: O_DSYNC does not cover it, so it is synced here. */
  truncateSync(size: number): void {
    fs.ftruncateSync(this.#fd, size);
    fs.fdatasyncSync(this.#fd);
  }

  syncSync(): void {}

  syncDataSync(): void {}

  lockSync(exclusive?: boolean): void {
    this.#lock.lockSync(exclusive);
  }

  unlockSync(): void {
    this.#lock.unlockSync();
  }

  close(): void {
    fs.closeSync(this.#fd);
    this.#lock.close();
  }
}
