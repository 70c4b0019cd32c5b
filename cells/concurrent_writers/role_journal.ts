// Cell 6's reading of its roles' journals, and the checks that need only the journals
// and what the store recovered (pure functions, so that each check names its culprit).
import { readAckJournal } from "../../harness/ack_journal.ts";

/** One journal line of a role writer (`children/role_writer.ts`). */
export interface RoleEntry {
  /** `inv` before the call, `ack` after it returned, `refused`, `read`, `done`, `error`. */
  k: "inv" | "ack" | "refused" | "read" | "done" | "error";
  /** The operation's number in the role's plan. */
  seq?: number;
  /** `append`, `obligation` or `rotate`. */
  op?: string;
  /** The appended session. */
  session?: string;
  /** The unique content written. */
  content?: string;
  /** What the store returned: a message id, or an obligation id. */
  id?: unknown;
  /** A read's message ids, in the store's order. */
  ids?: unknown[];
  /** A rotation's sessions. */
  parentId?: string;
  childId?: string;
  /** Wall-clock ms of an invocation (`inv`). */
  t?: number;
  /** Wall-clock ms at invocation and at acknowledgement. */
  t0?: number;
  t1?: number;
  /** The call's duration (ms). */
  ms?: number;
  /** A refusal's or error's name. */
  name?: string;
  /** An error's message. */
  message?: string;
  /** Whether the error was SQLite's busy error (classified where it was caught). */
  busy?: boolean;
}

/** An acknowledged append with its times, for the real-time order check. */
export interface TimedAppend {
  role: string;
  seq: number;
  session: string;
  content: string;
  id: number;
  t0: number;
  t1: number;
}

/** Reads a role's journal (a torn final line dropped). */
export function readRole(path: string): RoleEntry[] {
  return readAckJournal<RoleEntry>(path);
}

/**
 * Pairs that break real-time order: `a` acknowledged before `b` was invoked (whole
 * milliseconds apart on the one wall clock, so the order is certain) and yet
 * `a.id >= b.id`.
 *
 * @returns At most `limit` violations, described.
 */
export function realTimeViolations(appends: readonly TimedAppend[], limit = 3): string[] {
  const byAck = [...appends].sort((a, b) => a.t1 - b.t1);
  const byInvoke = [...appends].sort((a, b) => a.t0 - b.t0);
  const out: string[] = [];
  let i = 0;
  let best: TimedAppend | undefined;
  for (const b of byInvoke) {
    // Every append acknowledged in an earlier millisecond than b's invocation.
    while (i < byAck.length && byAck[i]!.t1 < b.t0) {
      if (!best || byAck[i]!.id > best.id) best = byAck[i];
      i++;
    }
    if (best && best.id >= b.id && out.length < limit) {
      out.push(
        `${best.role} #${best.seq} (id ${best.id}) was acknowledged at ${best.t1} before ${b.role} #${b.seq} (id ${b.id}) was invoked at ${b.t0}`,
      );
    }
  }
  return out;
}

/** A read of a session by a role, with the ids it held and when it was invoked. */
export interface TimedRead {
  role: string;
  session: string;
  ids: readonly number[];
  t0: number;
}

/**
 * Reads that missed an append acknowledged before they were invoked (whole milliseconds
 * apart on the one wall clock, so the order is certain): a process that read the session
 * before serves it from a cache of its own, unaware of other processes' writes.
 *
 * @returns At most `limit` violations, described.
 */
export function staleReads(
  appends: readonly TimedAppend[],
  reads: readonly TimedRead[],
  limit = 3,
): string[] {
  const out: string[] = [];
  for (const read of reads) {
    const held = new Set(read.ids);
    const missed = appends.filter((a) =>
      a.session === read.session && a.t1 < read.t0 && !held.has(a.id)
    );
    if (missed.length && out.length < limit) {
      const first = missed[0]!;
      out.push(
        `${read.role}'s read of ${read.session} invoked at ${read.t0} holds ${read.ids.length} message(s) but not ${missed.length} acknowledged before it, first ${first.role} #${first.seq} (id ${first.id}, acknowledged at ${first.t1})`,
      );
    }
  }
  return out;
}

/** The seqs of `0..total-1` a role neither acknowledged, nor refused, nor lost to a kill. */
export function unfinished(
  entries: readonly RoleEntry[],
  total: number,
  killedInFlight: ReadonlySet<number>,
): number[] {
  const settled = new Set(
    entries.filter((e) => e.k === "ack" || e.k === "refused").map((e) => e.seq),
  );
  const out: number[] = [];
  for (let seq = 0; seq < total; seq++) {
    if (!settled.has(seq) && !killedInFlight.has(seq)) out.push(seq);
  }
  return out;
}
