// The reference store with its appends committed at the `synchronous` level named by
// REFERENCE_SYNCHRONOUS (OFF, NORMAL, FULL, EXTRA; unset: the store's own policy), for
// the recorder's durability table (proof (a) of issue 16).
import { openStore as openReference } from "../../cells/reference_target.ts";
import {
  openWithSynchronous,
  type Synchronous,
  SYNCHRONOUS_LEVELS,
} from "../../cells/testdata/mutants/_synchronous.ts";
import type { StoreOptions } from "../../cells/contract/target.ts";

/** Opens the reference store at the environment's `synchronous` level. */
export function openStore(path: string, options: StoreOptions): unknown {
  const level = Deno.env.get("REFERENCE_SYNCHRONOUS")?.toUpperCase();
  if (level === undefined) return openReference(path, options);
  if (!SYNCHRONOUS_LEVELS.includes(level as Synchronous)) {
    throw new Error(
      `Invalid REFERENCE_SYNCHRONOUS "${level}": expected one of ${SYNCHRONOUS_LEVELS.join(", ")}`,
    );
  }
  return openWithSynchronous(path, options, level as Synchronous);
}
