// Clause 9's reader and judge: every batch present is whole, acknowledged ones with their
// ids; a batch's ids increase, sit together in the store's id order and come after every
// id acknowledged before it was invoked; nothing duplicated or reordered; messageCount
// agrees with the rows; every text and role as written; recovery is deterministic and the
// file sound.
import { readAckJournal } from "../../harness/ack_journal.ts";
import { checkOf, soundness, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import { openTargetStore, type Store, type StoredMessage } from "../contract/target.ts";
import { shownValue } from "../contract/typed.ts";
import { plainRole, turnRole } from "../engine/_roles.ts";
import {
  batchChange,
  type BatchEntry,
  type BatchMember,
  memberName,
  memberOf,
  writerSessions,
  writtenPlain,
} from "./batches.ts";

/** What one recovery pass reads: each session's rows, and `messageCount` when the store has it. */
export interface BatchRead {
  /** The active rows of each session, in the store's order. */
  rows: Record<string, Pick<StoredMessage, "id" | "role" | "content">[]>;
  /** `messageCount` of each session, or `null` when the store has none. */
  counts: Record<string, number> | null;
}

/** Everything the judge looks at for one recovered file. */
export interface BatchState {
  /** Two recovery passes, each from a fresh open. */
  passes: readonly [BatchRead, BatchRead];
  /** Each writer's journal, in its order. */
  journals: readonly (readonly BatchEntry[])[];
  /** Violations of the file's soundness: the passes differ, integrity, invariants. */
  soundness: readonly string[];
}

/** A batch as recovered: its members, where they sit in the id order. */
interface Recovered {
  key: string;
  session: string;
  n: number;
  members: { j: number; id: number; at: number }[];
}

/** An invocation, and where it sits in its writer's journal. */
interface Invocation {
  journal: number;
  index: number;
  t0: number;
}

/** An acknowledgement, and where it sits in its writer's journal. */
interface Ack {
  key: string;
  journal: number;
  index: number;
  ids: number[];
  t1: number;
}

const keyOf = (m: Pick<BatchMember, "w" | "b">) => `${m.w}:b${m.b}`;

/** The batches the rows hold, by key; rows naming no batch are returned apart. */
function recoveredBatches(read: BatchRead): { batches: Map<string, Recovered>; stray: string[] } {
  const all = Object.entries(read.rows).flatMap(([session, rows]) =>
    rows.map((row) => ({ session, ...row }))
  ).sort((a, b) => a.id - b.id);
  const batches = new Map<string, Recovered>();
  const stray: string[] = [];
  all.forEach((row, at) => {
    const member = memberOf(row.content);
    if (!member) {
      return void stray.push(`${row.session} row ${row.id}: ${JSON.stringify(row.content)}`);
    }
    const key = keyOf(member);
    const batch = batches.get(key) ?? { key, session: row.session, n: member.n, members: [] };
    batch.members.push({ j: member.j, id: row.id, at });
    batches.set(key, batch);
  });
  for (const batch of batches.values()) batch.members.sort((a, b) => a.j - b.j || a.id - b.id);
  return { batches, stray };
}

/** The last invocation of each batch and every acknowledgement, from the journals. */
function journalled(
  journals: BatchState["journals"],
): { invs: Map<string, Invocation>; acks: Ack[] } {
  const invs = new Map<string, Invocation>();
  const acks: Ack[] = [];
  journals.forEach((entries, journal) =>
    entries.forEach((entry, index) => {
      // A batch invoked again (its earlier invocation did not land) counts from the last.
      if (entry.k === "inv") invs.set(keyOf(entry), { journal, index, t0: entry.t0 });
      else acks.push({ key: keyOf(entry), journal, index, ids: entry.ids, t1: entry.t1 });
    })
  );
  return { invs, acks };
}

/** Every acknowledged batch is there whole, under the ids it was acknowledged with. */
function lostAcks(acks: readonly Ack[], batches: Map<string, Recovered>): string[] {
  return acks.flatMap((ack) => {
    const ids = batches.get(ack.key)?.members.map((m) => m.id) ?? [];
    return JSON.stringify(ids) === JSON.stringify(ack.ids) ? [] : [
      `${ack.key} acknowledged with ids ${JSON.stringify(ack.ids)}, recovered ${
        JSON.stringify(ids)
      }`,
    ];
  });
}

/** Batches present in part, rows naming no batch, batches nobody invoked. */
function partialBatches(
  batches: Map<string, Recovered>,
  invs: Map<string, Invocation>,
  stray: readonly string[],
): string[] {
  const problems = stray.map((row) => `a row of no batch: ${row}`);
  for (const batch of batches.values()) {
    const js = new Set(batch.members.map((m) => m.j));
    if (js.size < batch.n) {
      const missing = Array.from({ length: batch.n }, (_, j) => j).filter((j) => !js.has(j));
      problems.push(
        `${batch.key} is partial: ${js.size} of ${batch.n} messages, missing ${
          JSON.stringify(missing)
        }`,
      );
    }
    if (!invs.has(batch.key)) problems.push(`${batch.key} is present but was never invoked`);
  }
  return problems;
}

/** Ids strictly increasing in batch order, and no other message's id among them. */
function scatteredBatches(batches: Map<string, Recovered>): string[] {
  const problems: string[] = [];
  for (const batch of batches.values()) {
    const ids = batch.members.map((m) => m.id);
    const down = ids.findIndex((id, i) => i > 0 && id <= ids[i - 1]!);
    if (down !== -1) problems.push(`${batch.key}: ids ${JSON.stringify(ids)} do not increase`);
    const at = batch.members.map((m) => m.at);
    const span = Math.max(...at) - Math.min(...at) + 1;
    if (span !== batch.members.length) {
      problems.push(
        `${batch.key}: ${span - batch.members.length} other message(s) between its ids ${
          ids[0]
        } and ${ids.at(-1)} in the store's id order`,
      );
    }
  }
  return problems;
}

/**
 * Each batch present comes after every id acknowledged before it was invoked: by its own
 * writer earlier in its journal, or by any writer at an earlier millisecond.
 */
function earlyBatches(
  batches: Map<string, Recovered>,
  invs: Map<string, Invocation>,
  acks: readonly Ack[],
): string[] {
  const problems: string[] = [];
  for (const batch of batches.values()) {
    const inv = invs.get(batch.key);
    if (!inv) continue;
    const first = Math.min(...batch.members.map((m) => m.id));
    const before = acks.find((ack) =>
      (ack.journal === inv.journal ? ack.index < inv.index : ack.t1 < inv.t0) &&
      Math.max(...ack.ids) >= first
    );
    if (before) {
      problems.push(
        `${batch.key} starts at id ${first}, not after ${before.key}'s id ${
          Math.max(...before.ids)
        } acknowledged before it was invoked`,
      );
    }
  }
  return problems;
}

/** No message twice; each session's rows in id order follow their writer's batch order. */
function duplicatedOrReordered(read: BatchRead): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [session, rows] of Object.entries(read.rows)) {
    const last = new Map<string, BatchMember>();
    for (const row of rows) {
      const m = memberOf(row.content);
      if (!m) continue;
      const name = memberName(m);
      if (seen.has(name)) problems.push(`${name} duplicated (id ${row.id})`);
      seen.add(name);
      const prev = last.get(m.w);
      if (prev && (m.b < prev.b || (m.b === prev.b && m.j <= prev.j))) {
        problems.push(`${session}: ${name} (id ${row.id}) after ${keyOf(prev)}.${prev.j}`);
      }
      last.set(m.w, m);
    }
  }
  return problems;
}

/** Every batch member's text as it was written (what follows its name included). */
function changedTexts(read: BatchRead): string[] {
  const changed = Object.values(read.rows).flatMap((rows) =>
    rows.flatMap((row) => {
      const m = memberOf(row.content);
      const change = m && batchChange(m, row.content);
      return change ? [change] : [];
    })
  );
  return changed.length ? [`${changed.length} message(s) changed, first: ${changed[0]}`] : [];
}

/** Every batch member in the role it was written with. */
function changedRoles(read: BatchRead): string[] {
  const rows = Object.values(read.rows).flat();
  // A batch written again plain after a typed refusal was written in the plain roles.
  const plain = new Set(rows.flatMap((row) => {
    const m = memberOf(row.content);
    return m && writtenPlain(m, row.content) ? [keyOf(m)] : [];
  }));
  const changed = rows.flatMap((row) => {
    const m = memberOf(row.content);
    const written = m && (plain.has(keyOf(m)) ? plainRole(m.j) : turnRole(m.j));
    return m && row.role !== written
      ? [`${memberName(m)} read back as ${shownValue(row.role)}, written as "${written}"`]
      : [];
  });
  return changed.length
    ? [`${changed.length} message(s) in another role, first: ${changed[0]}`]
    : [];
}

/** `messageCount` of each session equals the active rows `getMessages` returns. */
function countsDiffer(read: BatchRead): string[] {
  if (!read.counts) return [];
  return Object.entries(read.rows).flatMap(([session, rows]) => {
    const count = read.counts![session];
    return count === rows.length ? [] : [`${session}: messageCount ${count}, ${rows.length} rows`];
  });
}

/**
 * Judges one recovered file of batch writers.
 *
 * @param state The two passes, the journals, the store's invariants and the file's soundness.
 * @returns The checks, one step each, and how many acknowledged batches are lost.
 * @example
 * ```ts
 * import { judgeBatches } from "./judge.ts";
 * const read = { rows: { "w0-s0": [{ id: 1, role: "user", content: "w0:b0.0/1" }] }, counts: null };
 * const journals = [[
 *   { k: "inv" as const, w: "w0", b: 0, s: "w0-s0", n: 1, t0: 1 },
 *   { k: "ack" as const, w: "w0", b: 0, ids: [1], t1: 2 },
 * ]];
 * const { checks } = judgeBatches({ passes: [read, read], journals, soundness: [] });
 * console.log(checks.every((c) => !c.violations.length && !c.missing.length)); // true
 * ```
 */
export function judgeBatches(state: BatchState): StateJudgement {
  const [read] = state.passes;
  const { batches, stray } = recoveredBatches(read);
  const { invs, acks } = journalled(state.journals);
  const lost = lostAcks(acks, batches);
  const checks: StateCheck[] = [
    {
      name: `every acknowledged batch wholly present: ${acks.length} acknowledged`,
      pattern: "ack-before-commit",
      violations: [],
      missing: lost.length ? [`${lost.length} acknowledged batch(es) lost, first: ${lost[0]}`] : [],
    },
    checkOf(
      `every batch all or nothing: ${batches.size} present`,
      partialBatches(batches, invs, stray),
    ),
    checkOf("batch ids increasing and contiguous in the id order", scatteredBatches(batches)),
    checkOf("every batch after each id acknowledged before it", earlyBatches(batches, invs, acks)),
    checkOf("nothing duplicated or reordered", duplicatedOrReordered(read)),
    {
      ...checkOf("every text kept as written (UTF-8, line breaks, a NUL)", changedTexts(read)),
      pattern: "text-changed",
    },
    {
      ...checkOf("every role kept as written (system, user, assistant, tool)", changedRoles(read)),
      pattern: "role-changed",
    },
    ...(read.counts ? [checkOf("messageCount equals the active rows", countsDiffer(read))] : []),
    checkOf("recovery deterministic, integrity ok, invariants hold", [...state.soundness]),
  ];
  return { checks, lost: lost.length };
}

/** Reads one recovery pass of `sessions` through the target's store, with its invariants. */
async function readPass(
  target: string,
  db: string,
  sessions: readonly string[],
): Promise<BatchRead & { invariants: string[] }> {
  const store: Store = await openTargetStore(target, db);
  try {
    const rows: BatchRead["rows"] = {};
    const counts: Record<string, number> = {};
    for (const session of sessions) {
      // A session its killed writer never created may be unknown: no rows.
      const read = await Promise.resolve().then(() => store.getMessages(session)).catch(() => []);
      rows[session] = read.map(({ id, role, content }) => ({ id, role, content }));
      if (store.messageCount) counts[session] = await store.messageCount(session);
    }
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { rows, counts: store.messageCount ? counts : null, invariants };
  } finally {
    await store.close();
  }
}

/**
 * Reads a file the batch writers left, twice, with their journals, and judges it.
 *
 * @param target The target specifier.
 * @param db The recovered file.
 * @param journals Each writer's journal file, by writer name.
 * @returns The judgement.
 * @example
 * ```ts ignore
 * const judged = await recoverAndJudge(ctx.target, db, { w0: `${dir}/journal-w0.jsonl` });
 * ```
 */
export async function recoverAndJudge(
  target: string,
  db: string,
  journals: Readonly<Record<string, string>>,
): Promise<StateJudgement> {
  const sessions = Object.keys(journals).flatMap(writerSessions);
  const first = await readPass(target, db, sessions);
  const second = await readPass(target, db, sessions);
  const strip = ({ rows, counts }: BatchRead): BatchRead => ({ rows, counts });
  return judgeBatches({
    passes: [strip(first), strip(second)],
    journals: Object.values(journals).map((path) => readAckJournal<BatchEntry>(path)),
    soundness: soundness(db, [strip(first), strip(second)], first.invariants),
  });
}
