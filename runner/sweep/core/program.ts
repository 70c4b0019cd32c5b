/**
 * The crash sweep's workload, shared by its child (which runs it and dies at a crash
 * point) and its parent (which runs it uncrashed to get the candidate states): the
 * operations and programs (`ops.ts`), the seeded store and the runner (`runner.ts`), and
 * the state snapshot the oracle compares (`snapshot.ts`).
 *
 * @example
 * ```ts
 * import { parseProgram } from "./program.ts";
 * console.log(parseProgram("ensure+end+reopen")); // ["ensure", "end", "reopen"]
 * ```
 *
 * @module
 */
export * from "./ops.ts";
export * from "./runner.ts";
export * from "./snapshot.ts";
