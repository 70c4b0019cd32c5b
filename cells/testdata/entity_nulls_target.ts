/**
 * Test target: the reference store, correct, whose records are instances of a class (an
 * ORM's entities and models, as `entity_rows_target.ts` hands them out) that leave their
 * `null` fields out, as `omitted_nulls_target.ts` does. The cells must read each record's
 * fields as they read a plain object's.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { withInstances } from "./entity_rows_target.ts";
import { openStore as openOmittedNulls } from "./omitted_nulls_target.ts";

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return withInstances(openOmittedNulls(path, options));
}
