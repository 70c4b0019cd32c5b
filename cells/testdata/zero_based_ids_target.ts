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
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

const down = (id: unknown) => typeof id === "number" ? id - 1 : id;
const up = (id: unknown) => typeof id === "number" ? id + 1 : id;

/** The reference's rewind options, its expected ids counted from 1. */
function rewindOptions(options: unknown): unknown {
  const expected = (options as { expectedActiveIds?: unknown[] } | undefined)?.expectedActiveIds;
  return expected ? { ...options as object, expectedActiveIds: expected.map(up) } : options;
}

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openReference(path, options);
  return wrapped(store, (key, method: Method) => {
    switch (key) {
      case "appendMessage":
        return (...args: unknown[]) => down(method(...args));
      case "appendMessages":
        return (...args: unknown[]) => (method(...args) as unknown[]).map(down);
      case "getMessages":
        return (...args: unknown[]) =>
          (method(...args) as { id: number }[]).map((row) => ({ ...row, id: row.id - 1 }));
      case "rewindToMessage":
        return (session: unknown, id: unknown, options?: unknown) =>
          method(session, up(id), rewindOptions(options));
      case "forkSession":
        return (session: unknown, id: unknown, newId: unknown) => method(session, up(id), newId);
      default:
        return method;
    }
  });
}
