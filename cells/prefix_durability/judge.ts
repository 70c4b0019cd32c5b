// Clause 1's reader and judge, shared by the SIGKILL cell (cell.ts) and the power-loss cell
// (power_loss.ts): the recovered transcript must be the contiguous prefix m0..m(N-1), each
// acknowledged append in it under its row id, every text as it was written.
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import { passesDiffer, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import { openTargetStore, type StoredMessage } from "../contract/target.ts";
import { shownValue } from "../contract/typed.ts";
import { textDifference } from "../engine/_texts.ts";
import { plainRole } from "../engine/_roles.ts";
import { prefixContent, prefixKind, prefixName, prefixRole } from "./_content.ts";

/**
 * Reads the recovered transcript of a run once, through the target's own store.
 *
 * @example
 * ```ts
 * import { recoverMessages } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url).href;
 * const path = `${Deno.makeTempDirSync()}/s.db`; // the file a killed writer left
 * const { messages, invariants } = await recoverMessages(target, path, "s1");
 * console.log(messages.length, invariants); // 0 []
 * ```
 */
export async function recoverMessages(
  target: string,
  dbPath: string,
  sessionId: string,
): Promise<{ messages: StoredMessage[]; invariants: string[] }> {
  const store = await openTargetStore(target, dbPath);
  try {
    const messages = (await store.getMessages(sessionId)).map(({ id, role, content }) => ({
      id,
      role,
      content,
    }));
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { messages, invariants };
  } finally {
    await store.close();
  }
}

/**
 * An append of the prefix writer, as journaled: acknowledged under its row id, or (a text
 * beyond `m<i>` only) refused with the error it threw, typed (a class of the store's own) or
 * not.
 */
export type Append =
  | { i: number; rowid: number }
  | { i: number; refused: string; typed: boolean };

/** The acknowledged appends among `acks`. */
export function acknowledgedOf(acks: readonly Append[]): { i: number; rowid: number }[] {
  return acks.filter((ack): ack is { i: number; rowid: number } => "rowid" in ack);
}

/** Clause 1's verdict on one recovered file. */
export interface PrefixJudgement extends StateJudgement {
  /** The recovered messages (first pass). */
  rows: StoredMessage[];
}

/**
 * The first row out of order, or -1: each row is the next append, past those the store
 * refused (which it may have kept or not).
 */
function firstGap(names: readonly (string | undefined)[], refused: ReadonlySet<number>): number {
  let next = 0;
  return names.findIndex((name) => {
    while (refused.has(next) && name !== `m${next}`) next++;
    return name !== `m${next++}`;
  });
}

/** What the writer's `i`-th append holds that a store may refuse: its text's kind, its role. */
function refusedKind(i: number): string {
  const role = prefixRole(i);
  return role === plainRole(i) ? prefixKind(i) : `${prefixKind(i)}, role ${role}`;
}

/**
 * Clause 1's check of the texts: each recovered as written, none refused untyped (a typed
 * refusal is the contract's way to decline, and changes nothing).
 */
function textCheck(rows: readonly StoredMessage[], acks: readonly Append[]): StateCheck {
  const changed = rows.flatMap((row) => {
    const name = prefixName(row.content);
    if (name === undefined) return [];
    const i = Number(name.slice(1));
    const written = prefixContent(i);
    return row.content === written
      ? []
      : [`${name} (${prefixKind(i)}) ${textDifference(row.content, written)}`];
  });
  const refused = acks.flatMap((ack) =>
    "refused" in ack && !ack.typed
      ? [`m${ack.i} (${refusedKind(ack.i)}) refused untyped: ${ack.refused}`]
      : []
  );
  return {
    name: "every text kept as written (UTF-8, line breaks, a NUL, 72 KiB)",
    pattern: "text-changed",
    violations: [
      ...(changed.length ? [`${changed.length} message(s) changed, first: ${changed[0]}`] : []),
      ...(refused.length
        ? [`${refused.length} text(s) refused with an untyped error, first: ${refused[0]}`]
        : []),
    ],
    missing: [],
  };
}

/**
 * Clause 1's check of the roles: each recovered message in the role it was appended with (a
 * resumed transcript whose assistant turns read back as the user's is not what was written).
 */
function roleCheck(rows: readonly StoredMessage[]): StateCheck {
  const changed = rows.flatMap((row) => {
    const name = prefixName(row.content);
    if (name === undefined) return [];
    const written = prefixRole(Number(name.slice(1)));
    return row.role === written
      ? []
      : [`${name} read back as ${shownValue(row.role)}, written as "${written}"`];
  });
  return {
    name: "every role kept as written (system, user, assistant, tool)",
    pattern: "role-changed",
    violations: changed.length
      ? [`${changed.length} message(s) in another role, first: ${changed[0]}`]
      : [],
    missing: [],
  };
}

/** What one state recovered: the transcript read twice, and the file's integrity. */
export interface RecoveredPasses {
  /** The first read: its messages and the store's invariants. */
  first: { messages: StoredMessage[]; invariants: string[] };
  /** The second read. */
  second: { messages: StoredMessage[] };
  /** `integrity_check`'s answer on an SQLite file, `undefined` on another. */
  integrity?: string | undefined;
}

/**
 * Reads session `cell1` twice through the target and judges it
 * ({@linkcode judgeRecovered}).
 */
export async function judgePrefix(
  target: string,
  db: string,
  acks: readonly Append[],
): Promise<PrefixJudgement> {
  const first = await recoverMessages(target, db, "cell1");
  const second = await recoverMessages(target, db, "cell1");
  return judgeRecovered({ first, second, integrity: integrityIfSqlite(db) }, acks);
}

/**
 * Clause 1's verdict on what a state recovered: the contiguous prefix `m0..m(N-1)` (past
 * texts the store refused), row ids increasing, each acknowledged append present with its
 * row id, every text as it was written and every role as it was appended, two passes identical, `integrity_check` ok, the
 * store's invariants.
 *
 * @param passes The transcript read twice, and the file's integrity.
 * @param acks The writer's journal: its acknowledged and refused appends.
 * @returns The checks, the first pass's rows and how many acknowledged appends are lost.
 * @example
 * ```ts
 * import { judgeRecovered } from "./judge.ts";
 * const messages = [{ id: 1, role: "user", content: "m0" }];
 * const judged = judgeRecovered(
 *   { first: { messages, invariants: [] }, second: { messages } },
 *   [{ i: 0, rowid: 1 }],
 * );
 * console.log(judged.checks.every((check) => check.violations.length === 0)); // true
 * ```
 */
export function judgeRecovered(passes: RecoveredPasses, acks: readonly Append[]): PrefixJudgement {
  const rows = passes.first.messages;
  const acknowledged = acknowledgedOf(acks);
  // Which append a row is, by the `m<i>` it starts with; the rest of its text is judged apart.
  const names = rows.map((row) => prefixName(row.content));
  const byId = new Map(rows.map((row, r) => [row.id, names[r]]));
  const lost = acknowledged.filter((ack) => byId.get(ack.rowid) !== `m${ack.i}`);
  const differ = passesDiffer(passes.first.messages, passes.second.messages);
  const { integrity } = passes;
  const checks: StateCheck[] = [
    {
      name: `nothing acknowledged lost: ${acknowledged.length} acknowledged`,
      pattern: "ack-before-commit",
      violations: [],
      missing: lost.length
        ? [
          `${lost.length} acknowledged append(s) lost or changed, first: ${
            JSON.stringify(lost[0])
          }`,
        ]
        : [],
    },
    prefixCheck(rows, names, acks),
    textCheck(rows, acks),
    roleCheck(rows),
    idCheck(rows, names, acknowledged),
    {
      name: "two recovery passes identical",
      violations: differ ? [differ] : [],
      missing: [],
    },
    {
      name: "integrity_check ok and invariants hold",
      violations: [
        ...(integrity === undefined || integrity === "ok" ? [] : [`integrity_check: ${integrity}`]),
        ...passes.first.invariants.map((p) => `invariant: ${p}`),
      ],
      missing: [],
    },
  ];
  return { rows, checks, lost: lost.length };
}

/** Clause 1's check of the order: each row the next append, at least every acknowledged. */
function prefixCheck(
  rows: readonly StoredMessage[],
  names: readonly (string | undefined)[],
  acks: readonly Append[],
): StateCheck {
  const refused = new Set(acks.flatMap((ack) => "refused" in ack ? [ack.i] : []));
  const gap = firstGap(names, refused);
  const acknowledged = acknowledgedOf(acks).length;
  return {
    name: `contiguous prefix m0..${names.at(-1) ?? `m${rows.length - 1}`}, N >= acknowledged`,
    violations: gap === -1 ? [] : [
      `row ${gap} is ${shownValue(rows[gap]?.content)}, after ${
        names[gap - 1] ?? "nothing"
      } (gap, duplicate or reorder)`,
    ],
    missing: rows.length < acknowledged
      ? [`${rows.length} recovered < ${acknowledged} acknowledged`]
      : [],
  };
}

/** Clause 1's check of the row ids: increasing, and each acknowledged one kept. */
function idCheck(
  rows: readonly StoredMessage[],
  names: readonly (string | undefined)[],
  acknowledged: readonly { i: number; rowid: number }[],
): StateCheck {
  const down = rows.findIndex((row, r) => r > 0 && row.id <= rows[r - 1]!.id);
  // An acknowledged append that survived keeps its acknowledged row id.
  const byName = new Map(rows.map((row, r) => [names[r], row]));
  const moved = acknowledged.find((ack) =>
    (byName.get(`m${ack.i}`)?.id ?? ack.rowid) !== ack.rowid
  );
  return {
    name: "rowids strictly increasing, acknowledged ids kept",
    violations: [
      ...(down === -1 ? [] : [`rowid ${rows[down]?.id} at ${down} does not increase`]),
      ...(moved
        ? [`m${moved.i} has row id ${byName.get(`m${moved.i}`)!.id}, acknowledged ${moved.rowid}`]
        : []),
    ],
    missing: [],
  };
}
