// The recorded-call sweep's programs (every bounded sequence of the operations a store
// supports, in the cells asked for) and a small pool that runs work with `jobs` in flight.
import { expandSequence, missingMethods, type ProgramOp, SEQUENCE_OPS } from "../core/program.ts";

/** The programs: every sequence up to `maxLength` of operations the store supports, in the cells asked for. */
export function programsFor(
  methods: readonly string[],
  maxLength: number,
  cells?: readonly number[],
): ProgramOp[][] {
  const out: ProgramOp[][] = [];
  let level: (typeof SEQUENCE_OPS[number])[][] = [[]];
  for (let n = 1; n <= maxLength; n++) {
    level = level.flatMap((prefix) => SEQUENCE_OPS.map((op) => [...prefix, op]));
    for (const sequence of level) {
      const program = expandSequence(sequence);
      if (missingMethods(program, methods).length) continue;
      if (cells && !program.every((op) => cells.includes(CLAUSE_CELL_OF[op]))) continue;
      out.push(program);
    }
  }
  return out;
}

const CLAUSE_CELL_OF: Record<ProgramOp, number> = {
  append: 1,
  batch: 1,
  claim: 2,
  rotate: 3,
  rewind: 4,
  fork: 4,
  record: 5,
  attempt: 5,
  deliver: 5,
  fail: 5,
  unknown: 5,
  sweep: 5,
};

/** Runs `work` over `items` with `jobs` in flight; the results in item order. */
export async function pool<T, R>(
  items: readonly T[],
  jobs: number,
  work: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, worker));
  return out;
}
