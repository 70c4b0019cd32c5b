/**
 * Test target: the reference store, correct, counting message ids from 0 (as a store that
 * numbers rows by their index does): every id it answers is one less than the reference's,
 * and every id it is given one less too. The contract asks ids to increase, not where they
 * start: the cells must pass it.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { withMessageIds } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return withMessageIds(openReference(path, options), {
    answered: (id) => id - 1,
    given: (id) => id + 1,
  });
}
