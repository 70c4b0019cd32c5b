/**
 * Crash/resume persistence conformance cells for session stores, in Deno: real
 * SIGKILLs to separate processes, and the contract proved from what survives on disk.
 *
 * Register every cell against your own store (a module whose `openStore(path, options)`
 * returns it), by URL or by path:
 *
 * ```ts
 * import { registerCells } from "./mod.ts";
 * await registerCells({ target: new URL("./cells/reference_target.ts", import.meta.url) });
 * ```
 *
 * The reference store (`SessionDB`), the FFI SQLite binding and the harness are
 * exported too.
 *
 * @module
 */
export * from "./cells/mod.ts";
export * from "./harness/mod.ts";
export * from "./session_db/mod.ts";
