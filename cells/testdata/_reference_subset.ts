// The reference store with some of its methods only: the test targets that check a cell
// SKIPs (naming what is missing) on a store that lacks the others.
import { SessionDB } from "../../session_db/mod.ts";
import type { Store, StoreMethod, StoreOptions } from "../contract/target.ts";

/** Opens the reference store and offers `methods` of it, nothing else. */
export function openReferenceSubset(
  path: string,
  options: StoreOptions,
  methods: readonly StoreMethod[],
): Store {
  const db = SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
  const bound = methods.map((m) => [m, (db[m as keyof SessionDB] as () => unknown).bind(db)]);
  return Object.fromEntries(bound) as unknown as Store;
}
