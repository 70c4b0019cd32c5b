/**
 * Faulty target: the fifth append throws, so cell 1's writer dies long before the kill
 * window. The cell must fail at once with the writer's stderr, not time out.
 *
 * @module
 */
import { openMutant } from "../mutants/_mutant.ts";
import type { StoreOptions } from "../../contract/target.ts";

/** Opens the faulty store. */
export function openStore(path: string, options: StoreOptions): unknown {
  let appends = 0;
  return openMutant(path, options, ({ store }) => ({
    appendMessage(sessionId: string, message: { role: "user"; content: string }) {
      if (sessionId !== "probe" && ++appends === 5) {
        throw new Error("writer died: the disk is on fire");
      }
      return store.appendMessage(sessionId, message);
    },
  }));
}
