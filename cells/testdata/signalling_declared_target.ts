/**
 * Test target, correct: `signalling_target.ts`, declaring the permission its `Deno.kill`
 * needs (`signals: true`).
 *
 * @module
 */
import type { ChildPermissions } from "../contract/target.ts";
export { openStore } from "./signalling_target.ts";

/** Its children may signal other processes. */
export const childPermissions: ChildPermissions = { signals: true };
