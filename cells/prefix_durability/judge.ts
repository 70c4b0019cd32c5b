// Clause 1's reader and judge, shared by the SIGKILL cell (prefix_durability.ts) and the
// power-loss cell (power_loss_prefix_durability.ts): the recovered transcript must be the
// contiguous prefix m0..m(N-1), each acknowledged append in it under its row id.
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import { passesDiffer, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import { openTargetStore, type StoredMessage } from "../contract/target.ts";

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

/** An acknowledged append of the prefix writer, as journaled. */
export type Append = { i: number; rowid: number };

/** Clause 1's verdict on one recovered file. */
export interface PrefixJudgement extends StateJudgement {
  /** The recovered messages (first pass). */
  rows: StoredMessage[];
}

/**
 * Reads session `cell1` twice through the target and judges it: the contiguous prefix
 * `m0..m(N-1)`, row ids increasing, each acknowledged append present with its row id,
 * two passes identical, `integrity_check` ok, the store's invariants.
 */
export async function judgePrefix(
  target: string,
  db: string,
  acks: readonly Append[],
): Promise<PrefixJudgement> {
  const first = await recoverMessages(target, db, "cell1");
  const second = await recoverMessages(target, db, "cell1");
  const rows = first.messages;
  const byId = new Map(rows.map((row) => [row.id, row.content]));
  const lost = acks.filter((ack) => byId.get(ack.rowid) !== `m${ack.i}`);
  const gap = rows.findIndex((row, i) => row.content !== `m${i}`);
  const down = rows.findIndex((row, i) => i > 0 && row.id <= rows[i - 1]!.id);
  // An acknowledged append that survived keeps its acknowledged row id.
  const moved = acks.find((ack) => ack.i < rows.length && rows[ack.i]!.id !== ack.rowid);
  const differ = passesDiffer(first.messages, second.messages);
  const integrity = integrityIfSqlite(db);
  const checks: StateCheck[] = [
    {
      name: `nothing acknowledged lost: ${acks.length} acknowledged`,
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
    {
      name: `contiguous prefix m0..m${rows.length - 1}, N >= acknowledged`,
      violations: gap === -1 ? [] : [
        `row ${gap} is ${
          JSON.stringify(rows[gap]?.content)
        }, expected "m${gap}" (gap, duplicate or reorder)`,
      ],
      missing: rows.length < acks.length
        ? [`${rows.length} recovered < ${acks.length} acknowledged`]
        : [],
    },
    {
      name: "rowids strictly increasing, acknowledged ids kept",
      violations: [
        ...(down === -1 ? [] : [`rowid ${rows[down]?.id} at ${down} does not increase`]),
        ...(moved
          ? [`m${moved.i} has row id ${rows[moved.i]!.id}, acknowledged ${moved.rowid}`]
          : []),
      ],
      missing: [],
    },
    {
      name: "two recovery passes identical",
      violations: differ ? [differ] : [],
      missing: [],
    },
    {
      name: "integrity_check ok and invariants hold",
      violations: [
        ...(integrity === undefined || integrity === "ok" ? [] : [`integrity_check: ${integrity}`]),
        ...first.invariants.map((p) => `invariant: ${p}`),
      ],
      missing: [],
    },
  ];
  return { rows, checks, lost: lost.length };
}
