/**
 * Test target: the reference store, chatty. It logs to stdout as it opens and closes, and
 * from an `unload` handler as its process ends (after any report a child prints), as many
 * real stores do. Correct: every cell must judge it as it judges the reference.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import { openStore as openReference } from "../reference_target.ts";
import type { StoreOptions } from "../contract/target.ts";

export { crashPoints, plantViolation } from "../reference_target.ts";

globalThis.addEventListener("unload", () => console.log("[store] process ending, bye"));

/** Opens the reference store, saying so on stdout, and says so again when it closes. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  console.log(`[store] opening ${path}`);
  const store = openReference(path, options);
  const close = store.close.bind(store);
  store.close = () => {
    close();
    console.log("[store] closed");
  };
  return store;
}
