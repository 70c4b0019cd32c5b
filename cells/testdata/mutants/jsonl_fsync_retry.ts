/**
 * Mutant (fault F1, injected errors): the JSON-lines store (`../jsonl_store/`) that retries
 * a failed `fdatasync` and acknowledges the append when the retry succeeds. The kernel
 * marked the pages clean at the failure, so the retry syncs nothing: a power loss after
 * it loses the acknowledged line. A SIGKILL keeps the page cache, so no crash cell sees
 * it. Not SQLite: the default leg only.
 *
 * @module
 */
import { JsonlStore } from "../jsonl_store/jsonl_store.ts";

/** Opens the mutant. */
export function openStore(path: string): JsonlStore {
  return JsonlStore.open(path, { retryFailedSync: true });
}
