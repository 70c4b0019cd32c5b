// The recorded-call sweep's programs (every bounded sequence of the operations a store
// supports, and the clause programs of cells 10 to 13, in the cells asked for), and the
// pool that runs work with `jobs` in flight.
import {
  CLAUSE_PROGRAMS,
  expandSequence,
  missingMethods,
  type ProgramOp,
  SEQUENCE_OPS,
} from "../core/program.ts";
import { alsoJudged } from "../core/clause_checks.ts";
import { CLAUSE_CELLS, CLAUSES } from "../core/oracle.ts";

/**
 * Twelve appends: a store's periodic work (a compaction or a checkpoint every few writes)
 * lands in a later write than any short sequence reaches.
 */
export const LONG_APPENDS: readonly ProgramOp[] = new Array<ProgramOp>(12).fill("append");

/**
 * The programs: every sequence up to `maxLength` of operations the store supports, then
 * the clause programs it supports (fixed, whatever `maxLength`), and from a `maxLength` of
 * two {@linkcode LONG_APPENDS}, in the cells asked for (a program is in a cell when every
 * operation's clause is, or when the cell judges its states too: a rotation's for cell 8).
 */
export function programsFor(
  methods: readonly string[],
  maxLength: number,
  cells?: readonly number[],
): ProgramOp[][] {
  const candidates: ProgramOp[][] = [];
  let level: (typeof SEQUENCE_OPS[number])[][] = [[]];
  for (let n = 1; n <= maxLength; n++) {
    level = level.flatMap((prefix) => SEQUENCE_OPS.map((op) => [...prefix, op]));
    candidates.push(...level.map(expandSequence));
  }
  candidates.push(...CLAUSE_PROGRAMS.map((p) => [...p]));
  if (maxLength >= 2) candidates.push([...LONG_APPENDS]);
  return candidates.filter((program) =>
    !missingMethods(program, methods).length &&
    (!cells || program.every((op) => cells.includes(CLAUSE_CELLS[CLAUSES[op]]!)) ||
      (alsoJudged(program, methods).some((c) => cells.includes(CLAUSE_CELLS[c]!)) &&
        program.every((op) => op === "rotate" || op === "claim")))
  );
}

export { pool } from "../../../internal/pool.ts";
