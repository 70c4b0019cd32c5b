/**
 * Test target: the reference store whose reads wait, polling, while a pid file of another
 * process is beside the database (`<path>.<pid>.pid`, made at open, removed at close): a
 * crash leaves one behind, so the store opens what a crash left but never reads it. The
 * cells judge it in their own process: the call that never returns must FAIL the cell,
 * named, instead of holding the run.
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { wrapped } from "./_wrapped.ts";

/** Opens the store, its pid file beside it. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const folder = path.slice(0, path.lastIndexOf("/"));
  const name = path.slice(path.lastIndexOf("/") + 1);
  const mine = `${path}.${Deno.pid}.pid`;
  Deno.writeTextFileSync(mine, String(Deno.pid));
  const others = () =>
    [...Deno.readDirSync(folder)].some((entry) =>
      entry.name.startsWith(`${name}.`) && entry.name.endsWith(".pid") &&
      entry.name !== `${name}.${Deno.pid}.pid`
    );
  const store = SessionDB.open(
    path,
    options.journalMode ? { journalMode: options.journalMode } : {},
  );
  return wrapped(store, (key, method) => {
    if (key === "close") {
      return () => {
        try {
          return method();
        } finally {
          Deno.removeSync(mine);
        }
      };
    }
    if (key !== "getMessages") return method;
    return async (...args: unknown[]) => {
      while (others()) await new Promise((resolve) => setTimeout(resolve, 50));
      return method(...args);
    };
  });
}
