// Cell 10's (ends and reopens) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec } from "./catalogue.ts";

/** The mutants cell 10 must catch. */
export const ENDS_AND_REOPENS_MUTANTS: readonly MutantSpec[] = [];
