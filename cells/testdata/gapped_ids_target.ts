/**
 * Test target: the reference store, correct, whose message ids leave gaps (ten apart, from
 * 13, as a store drawing them from a sequence shared with other tables, or stepping a
 * distributed counter): every id it answers is the reference's times ten plus three, and
 * every id it is given mapped back. The contract asks ids to increase, not to be
 * consecutive: the cells must pass it.
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
    answered: (id) => id * 10 + 3,
    given: (id) => (id - 3) / 10,
  });
}
