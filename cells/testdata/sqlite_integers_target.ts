/**
 * Test target: the reference store, correct, answering with SQLite's integers where the
 * contract has booleans, as a store handing out what `node:sqlite` or better-sqlite3 give it
 * does: a message's `active` flag as stored (`1`, `0`), and every boolean answer (a guarded
 * write's) as the rows it changed (`1` done, `0` refused). Every second answer's integers
 * are bigints (libSQL's). The cells must read `1` as `true` and `0` as `false`.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** A message row with its flag as an integer. */
type Row = Record<string, unknown> & { active?: unknown };

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openReference(path, options);
  let answers = 0;
  const integer = (flag: boolean) => ++answers % 2 === 0 ? BigInt(flag ? 1 : 0) : flag ? 1 : 0;
  return wrapped(store, (key, method: Method) => {
    if (key === "getMessages") {
      return async (...args: unknown[]) =>
        (await method(...args) as Row[]).map((row) =>
          typeof row.active === "boolean" ? { ...row, active: integer(row.active) } : row
        );
    }
    return (...args: unknown[]) => {
      const answer = method(...args);
      return typeof answer === "boolean" ? integer(answer) : answer;
    };
  });
}
