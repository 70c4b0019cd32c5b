// Cell 9's (batch atomicity) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec } from "./catalogue.ts";

/** The mutants cell 9 must catch. */
export const BATCH_ATOMICITY_MUTANTS: readonly MutantSpec[] = [];
