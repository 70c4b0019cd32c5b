// Cell 8's (resume resolution) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec } from "./catalogue.ts";

/** The mutants cell 8 must catch. */
export const RESUME_RESOLUTION_MUTANTS: readonly MutantSpec[] = [];
