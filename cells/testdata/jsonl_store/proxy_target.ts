/**
 * Test target: the JSON-lines store, correct, handed out as a `Proxy` whose methods are
 * answered by its `get` trap and listed among no keys (as a store made of generated
 * methods, or a remote client, can be): its capabilities must still be found.
 *
 * @module
 */
import { JsonlStore } from "./jsonl_store.ts";

/** Opens the store behind a Proxy. */
export function openStore(path: string): object {
  const store = JsonlStore.open(path) as unknown as Record<PropertyKey, unknown>;
  return new Proxy({}, {
    get(_target, key) {
      const member = store[key];
      return typeof member === "function" ? member.bind(store) : member;
    },
  });
}
