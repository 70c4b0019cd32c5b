/**
 * Test target: the JSON-lines store, correct under a SIGKILL, whose appends write their
 * first byte through a plain handle (never synced on its own) and the rest through the
 * log's `O_DSYNC` handle. Which of the two writes the synchronous one made durable is
 * more than the power-loss model follows: its tiers must say they cannot judge the run
 * (ERROR), never FAIL the store.
 *
 * @module
 */
import { JsonlStore } from "./jsonl_store.ts";
import { DsyncFile } from "./_dsync_file.ts";

class SplitWrites extends DsyncFile {
  #path: string;

  constructor(path: string) {
    super(path);
    this.#path = path;
  }

  override writeSync(bytes: Uint8Array): number {
    const plain = Deno.openSync(this.#path, { append: true });
    try {
      const first = plain.writeSync(bytes.subarray(0, 1));
      return first + super.writeSync(bytes.subarray(first));
    } finally {
      plain.close();
    }
  }
}

/** Opens the store. */
export function openStore(path: string): JsonlStore {
  return JsonlStore.open(path, { openFile: (file) => new SplitWrites(file) });
}
