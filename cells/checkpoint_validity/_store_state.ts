// The valid store cell 13 starts from, and what a fresh process reads of a store: every
// session's messages, which sessions exist, and the store's own invariant report.
import type { Store } from "../contract/target.ts";
import { withStore } from "../contract/with_store.ts";
import { answerOf } from "../contract/typed.ts";

/** The sessions of the valid store, and the order their messages are appended in. */
export const APPENDS: readonly (readonly [string, string])[] = [
  ["s", "s0"],
  ["s", "s1"],
  ["t", "t0"],
  ["s", "s2"],
  ["t", "t1"],
  ["s", "s3"],
  ["u", "u0"],
  ["s", "s4"],
];

/** The sessions of the valid store. */
export const VALID_SESSIONS: readonly string[] = ["s", "t", "u"];

/** The valid store as built: each session's message ids in order, and the store's methods. */
export interface Built {
  /** Each session's message ids, in append order. */
  ids: Record<string, number[]>;
  /** The optional methods the store has, of those cell 13 uses. */
  has: Record<"forkSession" | "checkInvariants" | "getSession" | "listSessions", boolean>;
}

/**
 * Builds the valid store at `db` (sessions `s`, `t`, `u`, their messages interleaved, so
 * that another session's message lies inside `s`'s range of ids) and closes it.
 *
 * @example
 * ```ts ignore
 * const { ids } = await buildValidStore(ctx.target, db);
 * ```
 */
export function buildValidStore(target: string, db: string): Promise<Built> {
  return withStore(target, db, async (store) => {
    const ids: Record<string, number[]> = {};
    for (const session of VALID_SESSIONS) {
      await store.createSession(session);
      ids[session] = [];
    }
    for (const [session, content] of APPENDS) {
      ids[session]!.push(Number(await store.appendMessage(session, { role: "user", content })));
    }
    const has = (method: keyof Store) => typeof store[method] === "function";
    return {
      ids,
      has: {
        forkSession: has("forkSession"),
        checkInvariants: has("checkInvariants"),
        getSession: has("getSession"),
        listSessions: has("listSessions"),
      },
    };
  });
}

/** What a fresh process reads of a store. */
export interface StoreState {
  /** Each session's messages as `[id, role, content]`, or `threw <name>`. */
  messages: Record<string, unknown>;
  /** The sessions `listSessions` lists, sorted (`null` without it). */
  listed: string[] | null;
  /** Whether each probed session exists by `getSession` (`null` without it). */
  exists: Record<string, boolean | null>;
  /** The store's invariant report (`null` without `checkInvariants`). */
  invariants: string[] | null;
}

/**
 * Reads the store at `db` in this process: the messages of the valid sessions, of
 * `probed` and of every listed session; whether each probed session exists; invariants.
 *
 * @example
 * ```ts ignore
 * const before = await readStoreState(ctx.target, db, ["ghost"]);
 * ```
 */
export function readStoreState(
  target: string,
  db: string,
  probed: readonly string[],
): Promise<StoreState> {
  return withStore(target, db, async (store) => {
    const listed = store.listSessions ? (await store.listSessions()).map((s) => s.id).sort() : null;
    const exists: Record<string, boolean | null> = {};
    for (const id of probed) {
      exists[id] = store.getSession ? await store.getSession(id) !== undefined : null;
    }
    const messages: Record<string, unknown> = {};
    for (const id of new Set([...VALID_SESSIONS, ...probed, ...listed ?? []])) {
      const read = await answerOf(() => store.getMessages(id));
      messages[id] = read.threw
        ? `threw ${read.name}`
        : (read.value as { id: number; role: string; content: string | null }[])
          .map((m) => [Number(m.id), m.role, m.content]);
    }
    const invariants = store.checkInvariants ? await store.checkInvariants() : null;
    return { messages, listed, exists, invariants };
  });
}
