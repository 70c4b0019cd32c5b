// The JSON-lines log opened with O_DSYNC through `node:fs` (Deno's own open takes no such
// flag): every write returns once its data is durable, so the store's syncs of it are
// no-ops.
import fs from "node:fs";
import { SelfSyncingFile } from "./_self_syncing_file.ts";

/** A log file whose writes are synchronous (`O_DSYNC`), with no sync calls. */
export class DsyncFile extends SelfSyncingFile {
  #fd: number;

  /** Opens (creating) `path` for appending with `O_DSYNC`. */
  constructor(path: string) {
    super(path);
    const { O_RDWR, O_APPEND, O_CREAT, O_DSYNC } = fs.constants;
    this.#fd = fs.openSync(path, O_RDWR | O_APPEND | O_CREAT | O_DSYNC, 0o600);
  }

  writeSync(bytes: Uint8Array): number {
    return fs.writeSync(this.#fd, bytes);
  }

  /** A size change is not a write: O_DSYNC does not cover it, so it is synced here. */
  truncateSync(size: number): void {
    fs.ftruncateSync(this.#fd, size);
    fs.fdatasyncSync(this.#fd);
  }

  protected closeFile(): void {
    fs.closeSync(this.#fd);
  }
}
