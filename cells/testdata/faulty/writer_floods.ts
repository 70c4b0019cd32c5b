/**
 * Faulty target: the fifth append of cell 1's writer floods stderr with 8 MiB, then
 * throws. The parent must keep draining (or the child would block on a full pipe and
 * never exit) and fail the cell at once with only a bounded tail of that stderr.
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
        const line = new TextEncoder().encode(`${"flood ".repeat(170)}\n`);
        for (let written = 0; written < 8 * 1024 * 1024; written += line.length) {
          Deno.stderr.writeSync(line);
        }
        throw new Error("writer flooded: the end of the flood");
      }
      return store.appendMessage(sessionId, message);
    },
  }));
}
