// What the log files whose writes sync themselves share: their sync calls are no-ops, and
// their lock is taken on a second, read-only Deno handle of the same file (opened at the
// first lock, once the file exists).
import type { LogFile } from "./jsonl_store.ts";

/** A log file whose every write is durable when it returns. */
export abstract class SelfSyncingFile implements LogFile {
  #path: string;
  #lock: Deno.FsFile | undefined;

  /** The file at `path` (created by the subclass). */
  constructor(path: string) {
    this.#path = path;
  }

  abstract writeSync(bytes: Uint8Array): number;

  abstract truncateSync(size: number): void;

  /** Closes the subclass's own descriptor. */
  protected abstract closeFile(): void;

  syncSync(): void {}

  syncDataSync(): void {}

  lockSync(exclusive?: boolean): void {
    this.#lock ??= Deno.openSync(this.#path, { read: true });
    this.#lock.lockSync(exclusive);
  }

  unlockSync(): void {
    this.#lock?.unlockSync();
  }

  close(): void {
    this.closeFile();
    this.#lock?.close();
  }
}
