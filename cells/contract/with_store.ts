// Reading a store back from this process: the judges of several cells open the target's
// store on a file a killed child left, read the same few things and close it again.
import { openTargetStore } from "./load_target.ts";
import type { Store, StoredMessage, StoredSession } from "./store.ts";

/**
 * Opens the target's store on `db` (the leg's journal mode), runs `use` and closes the
 * store, whatever `use` did.
 *
 * @param target The module.
 * @param db The database file.
 * @param use What to do with the store.
 * @returns What `use` returned.
 * @example
 * ```ts
 * import { withStore } from "./with_store.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * const db = `${Deno.makeTempDirSync()}/s.db`;
 * console.log(await withStore(target, db, async (store) => await store.getMessages("s1"))); // []
 * ```
 */
export async function withStore<T>(
  target: string | URL,
  db: string,
  use: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await openTargetStore(target, db);
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/**
 * The store's invariant violations: none from a store without `checkInvariants`.
 *
 * @param store The store.
 * @returns What `checkInvariants` reported, or `[]`.
 * @example
 * ```ts ignore
 * import { invariantsOf } from "./with_store.ts";
 * console.log(await invariantsOf(store)); // []
 * ```
 */
export async function invariantsOf(store: Store): Promise<string[]> {
  return store.checkInvariants ? await store.checkInvariants() : [];
}

/**
 * Every session `listSessions` lists, by id: its parent, when and why it ended (the
 * fields every store keeps, whatever else its rows carry).
 *
 * @param store A store with `listSessions`.
 * @returns The sessions, sorted by id.
 * @example
 * ```ts ignore
 * import { sortedSessions } from "./with_store.ts";
 * const ended = (await sortedSessions(store)).filter((s) => s.endedAt !== null);
 * ```
 */
export async function sortedSessions(store: Store): Promise<StoredSession[]> {
  return (await store.listSessions!()).map((s) => ({
    id: s.id,
    parentSessionId: s.parentSessionId,
    endedAt: s.endedAt,
    endReason: s.endReason,
  })).sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * Each continuation's (a session with a parent) messages, their roles and texts, by id.
 *
 * @param store The store.
 * @param sessions Its sessions, as listed.
 * @returns The role and text of each continuation's messages, in order.
 * @example
 * ```ts ignore
 * import { continuationMessages, sortedSessions } from "./with_store.ts";
 * const published = await continuationMessages(store, await sortedSessions(store));
 * console.log(published["child-0"]); // [{ role: "system", content: "summary 0" }]
 * ```
 */
export async function continuationMessages(
  store: Store,
  sessions: readonly Pick<StoredSession, "id" | "parentSessionId">[],
): Promise<Record<string, Pick<StoredMessage, "role" | "content">[]>> {
  const messages: Record<string, Pick<StoredMessage, "role" | "content">[]> = {};
  for (const s of sessions) {
    if (!s.parentSessionId) continue;
    messages[s.id] = (await store.getMessages(s.id)).map(({ role, content }) => ({
      role,
      content,
    }));
  }
  return messages;
}

/**
 * Each continuation's (a session with a parent) message contents, by id.
 *
 * @param store The store.
 * @param sessions Its sessions, as listed.
 * @returns The contents of each continuation's messages, in order.
 * @example
 * ```ts ignore
 * import { continuationContents, sortedSessions } from "./with_store.ts";
 * const summaries = await continuationContents(store, await sortedSessions(store));
 * console.log(summaries["child-0"]); // ["summary 0"]
 * ```
 */
export async function continuationContents(
  store: Store,
  sessions: readonly Pick<StoredSession, "id" | "parentSessionId">[],
): Promise<Record<string, (string | null)[]>> {
  const messages = await continuationMessages(store, sessions);
  return Object.fromEntries(
    Object.entries(messages).map(([id, list]) => [id, list.map((m) => m.content)]),
  );
}

/**
 * What a rotation left, read back: every session (without its end time) and each
 * continuation's (a session with a parent) message contents.
 *
 * @param store A store with `listSessions`.
 * @returns The sessions, sorted by id, and the continuations' contents by id.
 * @example
 * ```ts ignore
 * import { continuations } from "./with_store.ts";
 * const { sessions, children } = await continuations(store);
 * console.log(sessions.length, children["child-0"]); // 2 ["summary 0"]
 * ```
 */
export async function continuations(store: Store): Promise<{
  sessions: Omit<StoredSession, "endedAt">[];
  children: Record<string, (string | null)[]>;
}> {
  // The end time is left out: these reads compare what ended and why, not when.
  const sessions = (await sortedSessions(store)).map(({ endedAt: _, ...session }) => session);
  return { sessions, children: await continuationContents(store, sessions) };
}

/**
 * The handoff state of each of `ids`, by id (`getHandoffState` must be there).
 *
 * @param store The store.
 * @param ids The sessions.
 * @returns Each session's handoff state, in the order of `ids`.
 * @example
 * ```ts ignore
 * import { handoffStates } from "./with_store.ts";
 * console.log(await handoffStates(store, ["A", "B"])); // { A: "running", B: null }
 * ```
 */
export async function handoffStates(
  store: Store,
  ids: readonly string[],
): Promise<Record<string, string | null>> {
  const states: Record<string, string | null> = {};
  for (const id of ids) states[id] = await store.getHandoffState!(id);
  return states;
}
