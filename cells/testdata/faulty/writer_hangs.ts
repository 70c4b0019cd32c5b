/**
 * Faulty target: the fourth append of cell 1's writer hangs (for 60 s, then fails), so
 * the writer stays alive but stops acknowledging long before the kill window. The cell
 * must fail at its deadline with the writer's stderr, and kill it.
 *
 * @module
 */
import { openMutant } from "../mutants/_mutant.ts";
import type { StoreOptions } from "../../contract/target.ts";

/** Opens the faulty store. */
export function openStore(path: string, options: StoreOptions): unknown {
  let appends = 0;
  return openMutant(path, options, ({ store }) => ({
    async appendMessage(sessionId: string, message: { role: "user"; content: string }) {
      if (sessionId !== "probe" && ++appends === 4) {
        console.error("writer stuck: the disk stopped answering");
        await new Promise((resolve) => setTimeout(resolve, 60_000));
        throw new Error("writer stuck for 60 s");
      }
      return store.appendMessage(sessionId, message);
    },
  }));
}
