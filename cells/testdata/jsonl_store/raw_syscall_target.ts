/**
 * Test target: the JSON-lines store, correct, whose log is opened, written and synced by
 * raw system calls (`_raw_file.ts`): the recorder sees none of them, as with a Go program
 * or a static binary. The tiers that judge recorded calls must say they cannot judge it
 * (ERROR), never FAIL it; the cells, which read what is on disk, judge it.
 *
 * @module
 */
import { JsonlStore } from "./jsonl_store.ts";
import { LIBC, RawFile } from "./_raw_file.ts";

/** FFI for glibc (its `syscall`), on top of each child's scope. */
export const childPermissions = { ffi: [LIBC] };

/** Opens the store. */
export function openStore(path: string): JsonlStore {
  return JsonlStore.open(path, { openFile: (file) => new RawFile(file) });
}
