// The fault tier's judgement of one state against the journal of the run that left it:
// every acknowledged write is there exactly once and in order, nothing appears that was
// never asked for, a batch is whole or absent, and the store's own checks are clean.
// Pure functions, so the rules are tested without processes.
import { GENERIC_ERRORS } from "../contract/typed.ts";
import type { FaultMark } from "./_program.ts";
import type { ReadResult } from "./_reads.ts";

/** The acknowledged and the attempted writes of a journal. */
export interface Promised {
  /** Whether the session's creation was acknowledged. */
  created: boolean;
  /** The texts of acknowledged writes, in acknowledgement order, one group per operation. */
  acked: string[][];
  /** Every text some operation tried to write (acknowledged or not). */
  attempted: Set<string>;
  /** The groups written by one operation (a batch is whole or absent). */
  groups: string[][];
}

/** Reads what a journal promised. */
export function promisedBy(marks: readonly FaultMark[]): Promised {
  const intents = new Map<number, string[]>();
  const promised: Promised = { created: false, acked: [], attempted: new Set(), groups: [] };
  for (const mark of marks) {
    if (mark.at === "intent") {
      intents.set(mark.i, mark.texts);
      for (const text of mark.texts) promised.attempted.add(text);
      if (mark.texts.length) promised.groups.push(mark.texts);
    } else if (mark.at === "ack") {
      if (mark.op === "create") promised.created = true;
      const texts = intents.get(mark.i) ?? [];
      if (texts.length) promised.acked.push(texts);
    }
  }
  return promised;
}

/** The journal's complete lines, parsed (a torn last line was never written whole). */
export function parseMarks(lines: readonly string[]): FaultMark[] {
  const marks: FaultMark[] = [];
  for (const line of lines) {
    try {
      marks.push(JSON.parse(line));
    } catch {
      break;
    }
  }
  return marks;
}

/** The errors thrown without a type of the store's own (a caller cannot tell them apart). */
export function untypedErrors(marks: readonly FaultMark[]): string[] {
  return marks.flatMap((m) =>
    m.at === "threw" && GENERIC_ERRORS.has(m.name)
      ? [`${m.op} threw an untyped ${m.name}: ${m.message}`]
      : []
  );
}

/**
 * The problems a faulted run shows without reading its store: it hung (named with the
 * operation it hung in), it died instead of throwing, or it threw untyped errors.
 */
export function processProblems(
  run: { hung: boolean; status: Deno.CommandStatus; stderr: string; marks: FaultMark[] },
  deadlineMs: number,
): string[] {
  const problems: string[] = [];
  if (run.hung) {
    const last = run.marks.filter((m) => m.at === "intent").at(-1);
    problems.push(
      `the store hung for ${deadlineMs / 1000} s in ${last?.op ?? "open"} after the fault`,
    );
  } else if (!run.status.success) {
    const how = run.status.signal ? `signal ${run.status.signal}` : `exit ${run.status.code}`;
    problems.push(`the store's process died (${how}) instead of throwing: ${run.stderr}`);
  }
  problems.push(...untypedErrors(run.marks));
  return problems;
}

/** What is wrong with the session's messages, judged against what was promised. */
function messageProblems(
  found: { texts: string[]; ids: number[] },
  promised: Promised,
): string[] {
  const problems: string[] = [];
  const count = new Map<string, number>();
  for (const text of found.texts) count.set(text, (count.get(text) ?? 0) + 1);
  const at = (text: string) => found.texts.indexOf(text);
  let last = -1;
  for (const group of promised.acked) {
    for (const text of group) {
      const index = at(text);
      if (index < 0) problems.push(`acknowledged "${text}" is lost`);
      else if (index < last) problems.push(`acknowledged "${text}" is out of order`);
      else last = index;
    }
  }
  for (const [text, n] of count) {
    if (n > 1) problems.push(`"${text}" is there ${n} times`);
    if (!promised.attempted.has(text)) problems.push(`"${text}" was never written by anyone`);
  }
  for (const group of promised.groups) {
    const present = group.filter((text) => count.has(text)).length;
    if (present && present < group.length) {
      problems.push(`a batch is half there: ${present} of ${group.length} (${group.join(", ")})`);
    }
  }
  for (let i = 1; i < found.ids.length; i++) {
    if (!(found.ids[i]! > found.ids[i - 1]!)) {
      problems.push(`ids do not increase: ${found.ids[i - 1]} then ${found.ids[i]}`);
      break;
    }
  }
  return problems;
}

/**
 * What is wrong with one state read by a fresh process.
 *
 * @param read What the reader found.
 * @param promised What the journal before the state promised.
 * @returns The problems, `[]` when the state keeps every promise.
 */
export function stateProblems(read: ReadResult, promised: Promised): string[] {
  if (read.open !== undefined) return [`a fresh process cannot open the store: ${read.open}`];
  const problems: string[] = [];
  if (read.read && "threw" in read.read) {
    if (promised.created || promised.acked.length) {
      problems.push(`reading the session threw ${read.read.threw}`);
    }
  } else if (read.read) {
    problems.push(...messageProblems(read.read, promised));
  }
  for (const line of read.invariants ?? []) problems.push(`checkInvariants: ${line}`);
  return problems;
}

/**
 * What is wrong with the extra append a fresh process made once the fault was gone: it
 * must be kept, or refused with a typed error.
 */
export function afterProblems(read: ReadResult, text: string): string[] {
  if (!read.append) return [];
  if ("threw" in read.append) {
    const { name, message } = read.append.threw;
    return GENERIC_ERRORS.has(name)
      ? [`once the fault was gone, an append threw an untyped ${name}: ${message}`]
      : [];
  }
  const back = read.readBack;
  if (!back || "threw" in back) {
    return [
      `once the fault was gone, an acknowledged append could not be read back: ${
        back ? back.threw : "no read"
      }`,
    ];
  }
  return back.texts.includes(text)
    ? []
    : [`once the fault was gone, an acknowledged append ("${text}") is not there`];
}
