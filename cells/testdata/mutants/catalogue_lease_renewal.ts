// Cell 11's (lease renewal) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec } from "./catalogue.ts";

/** The mutants cell 11 must catch. */
export const LEASE_RENEWAL_MUTANTS: readonly MutantSpec[] = [];
