/**
 * Faulty target: a correct store whose `async appendMessage` forgot to `return` the id (it
 * commits, and answers `undefined`). The probe must name the answer and the contract, not
 * let every cell read it as a store that lost what it acknowledged.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { type Method, wrapped } from "../_wrapped.ts";
import { openStore as openReference } from "../unpointed_target.ts";

/** Opens the faulty store. */
export function openStore(path: string, options: StoreOptions): unknown {
  return wrapped(
    openReference(path, options),
    (key, method: Method) =>
      key === "appendMessage"
        ? async (...args: unknown[]) => {
          await method(...args);
        }
        : method,
  );
}
