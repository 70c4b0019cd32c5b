/**
 * Test target: the reference store, correct, whose `checkInvariants` speaks only when
 * something is wrong, as a check written as a procedure does (Python's `None`, a `void`
 * function): `undefined` when every invariant holds, the one violation as a string, a list
 * only of several. The cells must read its silence as `[]`.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openReference(path, options);
  return wrapped(store, (key, method: Method) => {
    if (key !== "checkInvariants") return method;
    return () => {
      const violations = method() as string[];
      if (violations.length === 0) return undefined;
      return violations.length === 1 ? violations[0] : violations;
    };
  });
}
