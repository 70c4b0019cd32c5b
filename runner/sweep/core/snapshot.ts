// The state the crash sweep's oracle compares, read through the store's own interface.
import type { StoredSession } from "../../../cells/contract/target.ts";
import { PARKED_HANDOFFS, REQUESTABLE } from "./ops.ts";
import { ENDABLE, GHOST, type SweepStore } from "./runner.ts";

/**
 * What the oracle compares: the store's state through its own interface, minus times.
 * Ids the store chooses are normalised so that two runs of the same program compare
 * equal: message ids become their rank among all message ids (order is kept, gaps are
 * not), obligations are keyed by their payload (unique per program).
 */
export interface StoreState {
  /** Every session, by id. */
  sessions: {
    id: string;
    parent: string | null;
    ended: boolean;
    endReason: string | null;
    handoff: string | null;
  }[];
  /** Every row of every session, rewound ones too: [id rank, role, content, active]. */
  messages: Record<string, [number, string, string | null, boolean][]>;
  /** Every obligation, by payload. */
  obligations: {
    content: string;
    state: string;
    fence: number;
    lastError: string | null;
  }[];
}

/**
 * Reads the state the oracle compares.
 *
 * @param store The store.
 * @returns Sessions, messages (with the active flag) and obligations, in a fixed order.
 */
export async function snapshot(store: SweepStore): Promise<StoreState> {
  const listed = store.listSessions ? await store.listSessions() : await namedSessions(store);
  const sessions = listed.map((s) => ({
    id: s.id,
    parent: s.parentSessionId,
    ended: s.endedAt !== null,
    endReason: s.endReason,
    handoff: s.handoffState ?? null,
  })).sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  // The handoff state through the handoff API when there is one: listing sessions need not carry it.
  if (store.getHandoffState) {
    for (const s of sessions) s.handoff = await store.getHandoffState(s.id) ?? null;
  }
  const rows: Record<
    string,
    { id: number; role: string; content: string | null; active?: boolean }[]
  > = {};
  for (const s of sessions) rows[s.id] = await store.getMessages(s.id, { includeInactive: true });
  const rank = new Map(
    Object.values(rows).flat().map((m) => m.id).sort((a, b) => a - b).map((id, n) => [id, n]),
  );
  const messages: StoreState["messages"] = {};
  for (const s of sessions) {
    messages[s.id] = rows[s.id]!.map((
      m,
    ) => [rank.get(m.id)!, m.role, m.content, m.active !== false]);
  }
  const obligations = store.listObligations
    ? (await store.listObligations()).map((o) => ({
      content: o.content,
      state: o.state,
      fence: o.deliveryFence,
      lastError: o.lastError,
    })).sort((a, b) => a.content < b.content ? -1 : a.content > b.content ? 1 : 0)
    : [];
  return { sessions, messages, obligations };
}

/**
 * The sessions of a store without `listSessions`: those the programs name that exist
 * (`main`, and the parked handoffs when the store parks them), by `getSession` when it
 * has one (`ens` and `ghost` only then). Programs that create sessions (rotate, fork)
 * need `listSessions`.
 */
async function namedSessions(store: SweepStore): Promise<StoredSession[]> {
  const ids = ["main"];
  if (store.requestHandoff) ids.push(...Array.from({ length: PARKED_HANDOFFS }, (_, h) => `h${h}`));
  if (store.requestHandoff && store.listPendingHandoffs) {
    ids.push(...Array.from({ length: REQUESTABLE }, (_, p) => `p${p}`));
  }
  // Sessions only some programs make, or that must never exist: read when they can be told apart.
  if (store.getSession) ids.push(ENDABLE, GHOST);
  const out: StoredSession[] = [];
  for (const id of ids) {
    const found = store.getSession
      ? await store.getSession(id)
      : { id, parentSessionId: null, endedAt: null, endReason: null };
    if (found) out.push(found);
  }
  return out;
}
