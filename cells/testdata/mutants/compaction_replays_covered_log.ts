/**
 * Mutant (prefix durability, under SIGKILL): the compacting store
 * (`../compacting_store/target.ts`) that replays every log line on top of its snapshot,
 * those the snapshot already covers included. A crash between the snapshot's rename and the
 * log's cut, inside every eighth append, doubles the lines since the last compaction. Only
 * a kill inside that append shows it: cell 1's kill series walks the busiest append. Not
 * SQLite: the default leg only.
 *
 * @module
 */
import { CompactingStore } from "../compacting_store/compacting_store.ts";

/** Opens the mutant. */
export function openStore(path: string): CompactingStore {
  return CompactingStore.open(path, { skipCovered: false });
}
