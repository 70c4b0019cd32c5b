/**
 * Targets for stores nobody here wrote: `node_sqlite.ts` (Deno's built-in `node:sqlite`,
 * durability policy from `NODE_SQLITE_JOURNAL_MODE` / `NODE_SQLITE_SYNCHRONOUS`) and
 * `deno_kv.ts` (Deno KV, needs `--unstable-kv`). Pass a module's path as `--target`.
 *
 * @example
 * ```ts
 * import { NodeSqliteStore } from "./mod.ts";
 * const store = await NodeSqliteStore.open(`${Deno.makeTempDirSync()}/s.db`, {});
 * store.close();
 * ```
 *
 * @module
 */
export {
  durabilityPolicy,
  NodeSqliteOptionError,
  NodeSqliteStore,
  type Synchronous,
} from "./node_sqlite.ts";
export { DenoKvStore } from "./deno_kv.ts";
export type {
  CellMessage,
  RecoveredObligationView,
  StoredMessage,
  StoredObligation,
  StoredSession,
  StoreOptions,
} from "../cells/contract/target.ts";
