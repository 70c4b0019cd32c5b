/**
 * A correct but different session store (its own schema and SQL over the project's
 * SQLite binding), which every cell must pass.
 *
 * @module
 */
export * from "./alt_store.ts";
