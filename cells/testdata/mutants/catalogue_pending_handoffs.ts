// Cell 12's (pending handoffs) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec } from "./catalogue.ts";

/** The mutants cell 12 must catch. */
export const PENDING_HANDOFFS_MUTANTS: readonly MutantSpec[] = [];
