// The crash sweep's state space: which crash states a target's points and methods give
// (every point x occurrence with the program that owns it, and the bounded sequences
// crashed in their last operation), the seeded sample of the sequences, and the ids a
// report prints and `--state` replays.
import { seededRandom } from "../../../harness/seeded_random.ts";
import {
  expandSequence,
  hitsPerCall,
  methodOf,
  missingMethods,
  owns,
  POINT_PROGRAMS,
  type ProgramOp,
  SEQUENCE_OPS,
  type SequenceOp,
} from "./program.ts";
import type { SweepOptions } from "./types.ts";

/** A crash state to run: a program and where to kill it. */
export interface PlannedState {
  /** Its id, as reported and replayed: `<point>@<k>` or `<op>+<op>/<point>@<k>`. */
  id: string;
  /** A named point's occurrence, or a bounded sequence crashed in its last operation. */
  kind: "point" | "sequence";
  /** The crash point the child dies at. */
  point: string;
  /** The occurrence of the point it dies at (from 1). */
  k: number;
  /** The operations the child runs. */
  program: ProgramOp[];
  /** Sequences: the operation the crash must interrupt (the last). */
  expectedOp?: number;
}

/** Whether a point passes the filter: exact names, or method prefixes ending with `:`. */
export function selected(point: string, filter: readonly string[] | undefined): boolean {
  if (!filter?.length) return true;
  return filter.some((f) => f.endsWith(":") ? point.startsWith(f) : point === f);
}

/** How many times the program reaches `point` up to (excluding) operation `upTo`. */
function hitsBefore(program: readonly ProgramOp[], point: string, upTo: number): number {
  let hits = 0;
  const calls = new Map<ProgramOp, number>();
  for (let i = 0; i < upTo; i++) {
    const op = program[i]!;
    const call = calls.get(op) ?? 0;
    calls.set(op, call + 1);
    hits += hitsPerCall(op, point, call);
  }
  return hits;
}

function callIndex(program: readonly ProgramOp[], at: number): number {
  return program.slice(0, at).filter((op) => op === program[at]).length;
}

/**
 * Plans the point sweep: every selected point × occurrence, with the program that owns
 * the point; points no program can reach are returned as uncovered with the reason, and
 * points of methods the store does not have as not applicable.
 *
 * @param points The target's crash points.
 * @param methods The store's methods.
 * @param options Point filter and occurrences.
 * @returns The states, the uncovered points and the points not applicable.
 * @example
 * ```ts
 * import { planPoints } from "./plan.ts";
 * const { states } = planPoints(["appendMessage:afterInsert"], ["appendMessage"], {});
 * console.log(states.map((s) => s.id)); // the point at @1, @2, @3
 * ```
 */
export function planPoints(
  points: readonly string[],
  methods: readonly string[],
  options: Pick<SweepOptions, "points" | "occurrences">,
): {
  states: { id: string; point: string; k: number; program: string }[];
  uncovered: { point: string; reason: string }[];
  notApplicable: { point: string; reason: string }[];
} {
  const planned = planPointStates(points, methods, options);
  return {
    states: planned.states.map((s) => ({
      id: s.id,
      point: s.point,
      k: s.k,
      program: s.program.join("+"),
    })),
    uncovered: planned.uncovered,
    notApplicable: planned.notApplicable,
  };
}

/** {@linkcode planPoints} with the programs: the states the sweep runs. */
export function planPointStates(
  points: readonly string[],
  methods: readonly string[],
  options: Pick<SweepOptions, "points" | "occurrences">,
): {
  states: PlannedState[];
  uncovered: { point: string; reason: string }[];
  notApplicable: { point: string; reason: string }[];
} {
  const states: PlannedState[] = [];
  const uncovered: { point: string; reason: string }[] = [];
  const notApplicable: { point: string; reason: string }[] = [];
  for (const point of points.filter((p) => selected(p, options.points))) {
    if (!methods.includes(methodOf(point))) {
      notApplicable.push({
        point,
        reason: `the store has no ${methodOf(point)}, so nothing can reach the point`,
      });
      continue;
    }
    const program = POINT_PROGRAMS[methodOf(point)];
    if (!program) {
      uncovered.push({
        point,
        reason: `no sweep operation calls ${methodOf(point)} (add a program for it to ` +
          `POINT_PROGRAMS in tools/sweep/_program.ts)`,
      });
      continue;
    }
    const missing = missingMethods(program, methods);
    if (missing.length) {
      uncovered.push({ point, reason: `the store lacks ${missing.join(", ")}` });
      continue;
    }
    for (const k of options.occurrences ?? [1, 2, 3]) {
      states.push({ id: `${point}@${k}`, kind: "point", point, k, program: [...program] });
    }
  }
  return { states, uncovered, notApplicable };
}

/** Every sequence of 1..maxLength operations, shortest first, in operation order. */
function allSequences(maxLength: number): SequenceOp[][] {
  const out: SequenceOp[][] = [];
  let level: SequenceOp[][] = [[]];
  for (let n = 1; n <= maxLength; n++) {
    level = level.flatMap((prefix) => SEQUENCE_OPS.map((op) => [...prefix, op]));
    out.push(...level);
  }
  return out;
}

/** The bounded-sequence states of the full space, and how many sequences it holds. */
export function planSequenceStates(
  points: readonly string[],
  methods: readonly string[],
  options: Pick<SweepOptions, "points" | "maxLength">,
): { states: PlannedState[]; sequences: number } {
  const chosen = points.filter((p) => selected(p, options.points));
  const states: PlannedState[] = [];
  let sequences = 0;
  for (const sequence of allSequences(options.maxLength ?? 3)) {
    const program = expandSequence(sequence);
    if (missingMethods(program, methods).length) continue;
    sequences++;
    const last = program.length - 1;
    const op = program[last]!;
    for (const point of chosen.filter((p) => owns(op, p))) {
      const before = hitsBefore(program, point, last);
      for (let j = 1; j <= hitsPerCall(op, point, callIndex(program, last)); j++) {
        states.push({
          id: `${sequence.join("+")}/${point}@${before + j}`,
          kind: "sequence",
          point,
          k: before + j,
          program,
          expectedOp: last,
        });
      }
    }
  }
  return { states, sequences };
}

/**
 * Sizes the bounded-sequence space: every sequence of up to `maxLength` operations with
 * a crash at every point (and occurrence) of its last operation.
 *
 * @param points The target's crash points.
 * @param methods The store's methods.
 * @param options Point filter and the longest sequence.
 * @returns How many sequences and crash states the full space holds.
 * @example
 * ```ts
 * import { sequenceSpace } from "./plan.ts";
 * console.log(sequenceSpace(["appendMessage:afterInsert"], ["appendMessage"], {}).sequences);
 * ```
 */
export function sequenceSpace(
  points: readonly string[],
  methods: readonly string[],
  options: Pick<SweepOptions, "points" | "maxLength">,
): { sequences: number; states: number } {
  const { states, sequences } = planSequenceStates(points, methods, options);
  return { sequences, states: states.length };
}

/** A seeded sample of `n` items, in their original order. */
export function sample<T>(items: readonly T[], n: number, seed: number): T[] {
  if (n >= items.length) return [...items];
  const random = seededRandom(seed ^ 0x5eed);
  const index = items.map((_, i) => i);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(random() * (index.length - i));
    [index[i], index[j]] = [index[j]!, index[i]!];
  }
  return index.slice(0, n).sort((a, b) => a - b).map((i) => items[i]!);
}

/**
 * The state a reported id names: `<point>@<k>` or `<op>+<op>/<point>@<k>`.
 *
 * @throws {Error} When the id is malformed or names an unknown operation.
 */
export function parseStateId(id: string): PlannedState {
  const match = /^(?:([a-z+]+)\/)?([A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+)@(\d+)$/.exec(id);
  if (!match) {
    throw new Error(
      `Invalid sweep state "${id}": use <point>@<k> or <op>+<op>/<point>@<k>, as reported`,
    );
  }
  const [, seq, point, k] = match;
  if (seq) {
    const sequence = seq.split("+").map((op) => {
      if (!(SEQUENCE_OPS as readonly string[]).includes(op)) {
        throw new Error(
          `Invalid sweep state "${id}": unknown operation "${op}" (use ${SEQUENCE_OPS.join(", ")})`,
        );
      }
      return op as SequenceOp;
    });
    const program = expandSequence(sequence);
    return {
      id,
      kind: "sequence",
      point: point!,
      k: Number(k),
      program,
      expectedOp: program.length - 1,
    };
  }
  const program = POINT_PROGRAMS[methodOf(point!)];
  if (!program) {
    throw new Error(`Invalid sweep state "${id}": no sweep operation calls ${methodOf(point!)}`);
  }
  return { id, kind: "point", point: point!, k: Number(k), program: [...program] };
}
