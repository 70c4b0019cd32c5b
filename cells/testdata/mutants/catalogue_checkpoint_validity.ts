// Cell 13's (checkpoint validity) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec } from "./catalogue.ts";

/** The mutants cell 13 must catch. */
export const CHECKPOINT_VALIDITY_MUTANTS: readonly MutantSpec[] = [];
