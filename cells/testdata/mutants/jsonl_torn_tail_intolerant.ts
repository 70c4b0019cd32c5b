/**
 * Mutant (power loss, torn writes): the JSON-lines store (`../jsonl_store/`), durable
 * (each record one `write`, synced before it returns), whose reader cannot open a log
 * whose last line is torn: it asks every line to parse and the log to end with a newline,
 * where the correct store drops the torn tail. A SIGKILL never tears a `write`, so the
 * SIGKILL cells pass it; a power loss that tears the last unsynced sector leaves a store
 * that does not open. Not SQLite: it runs on the default leg only.
 *
 * @module
 */
import { JsonlStore } from "../jsonl_store/jsonl_store.ts";
import { logText } from "./_jsonl.ts";

/** Opens the mutant: refuses a log whose last line is not whole. */
export function openStore(path: string): JsonlStore {
  const text = logText(path);
  const lines = text.split("\n");
  if (lines.pop() !== "") {
    throw new Error(`Cannot open store "${path}": line ${lines.length + 1} has no newline`);
  }
  for (const [i, line] of lines.entries()) {
    try {
      JSON.parse(line);
    } catch (error) {
      throw new Error(`Cannot open store "${path}": line ${i + 1} is corrupt`, { cause: error });
    }
  }
  return JsonlStore.open(path);
}
