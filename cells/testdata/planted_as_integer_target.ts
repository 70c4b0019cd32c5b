/**
 * Test target: the reference store whose `plantViolation` answers as SQLite's `changes()`
 * does, `1` for a planted violation and `0` for one it cannot hold, as a worker returning
 * rows changed does. Cell 13 must judge every violation it planted.
 *
 * @module
 */
import type { SchemaViolation } from "../contract/target.ts";
import { plantViolation as plant } from "../reference_target.ts";

export { crashPoints, openStore } from "../reference_target.ts";

/** Plants the violation; `1` when planted. */
export async function plantViolation(path: string, violation: SchemaViolation): Promise<number> {
  return await plant(path, violation) ? 1 : 0;
}
