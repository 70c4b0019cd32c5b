/**
 * Mutant (fault F2, corruption): the JSON-lines store (`../jsonl_store/`) that, at open,
 * drops every record that does not parse, wherever it is, and serves the rest as whole,
 * where the store refuses a damaged record before a good one. Its torn tail it leaves to
 * the store, so a crash or a power loss alone never shows it. Not SQLite: the default leg
 * only.
 *
 * @module
 */
import { JsonlStore } from "../jsonl_store/jsonl_store.ts";
import { logText } from "./_jsonl.ts";

function parses(line: string): boolean {
  try {
    const value = JSON.parse(line);
    return typeof value === "object" && value !== null && typeof value.t === "string";
  } catch {
    return false;
  }
}

/** Opens the mutant: skips unparsable records, then opens the store. */
export function openStore(path: string): JsonlStore {
  const text = logText(path);
  const lines = text.split("\n");
  const tail = lines.pop() ?? ""; // "" after the last newline, or a torn tail
  const kept = lines.filter(parses);
  if (kept.length !== lines.length) {
    // The broken part: the damaged records vanish and the rest reads as the whole log.
    Deno.writeTextFileSync(path, kept.map((line) => `${line}\n`).join("") + tail);
  }
  return JsonlStore.open(path);
}
