/**
 * Test target: the reference store whose `plantViolation` plants but answers nothing (an
 * `async` hook that forgot to `return`). Cell 13 must say so, not read it as a violation
 * the store cannot hold and leave the rule unjudged.
 *
 * @module
 */
import type { SchemaViolation } from "../contract/target.ts";
import { plantViolation as plant } from "../reference_target.ts";

export { crashPoints, openStore } from "../reference_target.ts";

/** Plants the violation and answers nothing. */
export async function plantViolation(path: string, violation: SchemaViolation): Promise<void> {
  await plant(path, violation);
}
