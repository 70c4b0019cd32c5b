/**
 * A target nobody here wrote the storage of: a session store on Deno KV (`Deno.openKv`,
 * SQLite underneath, in WAL mode), for the file-system call recorder's tiers. Needs
 * `--unstable-kv`.
 *
 * Keys: `["session", id]` holds a session; `["message", sessionId, id]` a message;
 * `["next_id"]` the id counter. An append is one atomic commit that checks the counter's
 * versionstamp and writes the counter and the message (retried when another writer won).
 * Deno KV has no journal-mode knob: a leg's `journalMode` is accepted and ignored (its
 * file stays in WAL), so the cells' DELETE leg audit will SKIP it.
 *
 * @example
 * ```ts ignore
 * import { openStore } from "./deno_kv.ts";
 * const store = await openStore(`${Deno.makeTempDirSync()}/s.kv`, {});
 * await store.createSession("s1");
 * console.log(await store.appendMessage("s1", { role: "user", content: "hi" })); // 1
 * store.close();
 * ```
 *
 * @module
 */
import type {
  CellMessage,
  StoredMessage,
  StoredSession,
  StoreOptions,
} from "../cells/contract/target.ts";

interface KvSession {
  id: string;
  parentSessionId: string | null;
  endedAt: number | null;
  endReason: string | null;
  handoffState: string | null;
}

/**
 * The store on Deno KV.
 *
 * @example
 * ```ts ignore
 * import { DenoKvStore } from "./deno_kv.ts";
 * const store = new DenoKvStore(await Deno.openKv(`${Deno.makeTempDirSync()}/s.kv`));
 * console.log(await store.getMessages("none")); // []
 * store.close();
 * ```
 */
export class DenoKvStore {
  #kv: Deno.Kv;

  /**
   * Wraps an open database.
   *
   * @param kv The database.
   */
  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /** Creates a session, keeping an existing one. */
  async createSession(id: string): Promise<void> {
    const session: KvSession = {
      id,
      parentSessionId: null,
      endedAt: null,
      endReason: null,
      handoffState: null,
    };
    await this.#kv.atomic().check({ key: ["session", id], versionstamp: null })
      .set(["session", id], session).commit();
  }

  /** Appends a message in one atomic commit; returns its id once committed. */
  async appendMessage(sessionId: string, message: CellMessage): Promise<number> {
    for (;;) {
      const [session, counter] = await this.#kv.getMany<[KvSession, bigint]>([
        ["session", sessionId],
        ["next_id"],
      ]);
      if (!session.value) throw new Error(`Cannot append to session "${sessionId}": not found`);
      const id = Number(counter.value ?? 0n) + 1;
      const result = await this.#kv.atomic()
        .check(counter)
        .set(["next_id"], BigInt(id))
        .set(["message", sessionId, id], { id, role: message.role, content: message.content })
        .commit();
      if (result.ok) return id;
    }
  }

  /** The messages of a session in id order (keys sort numerically). */
  async getMessages(sessionId: string): Promise<StoredMessage[]> {
    const rows: StoredMessage[] = [];
    for await (const entry of this.#kv.list<StoredMessage>({ prefix: ["message", sessionId] })) {
      rows.push(entry.value);
    }
    return rows;
  }

  /** Reads a session. */
  async getSession(id: string): Promise<StoredSession | undefined> {
    return (await this.#kv.get<KvSession>(["session", id])).value ?? undefined;
  }

  /** Every session. */
  async listSessions(): Promise<StoredSession[]> {
    const sessions: StoredSession[] = [];
    for await (const entry of this.#kv.list<KvSession>({ prefix: ["session"] })) {
      sessions.push(entry.value);
    }
    return sessions;
  }

  async #swapHandoff(sessionId: string, from: (state: string | null) => boolean, to: string) {
    for (;;) {
      const entry = await this.#kv.get<KvSession>(["session", sessionId]);
      if (!entry.value || !from(entry.value.handoffState)) return false;
      const result = await this.#kv.atomic().check(entry)
        .set(["session", sessionId], { ...entry.value, handoffState: to }).commit();
      if (result.ok) return true;
    }
  }

  /** Parks a session for handoff; `false` when one is pending or running. */
  requestHandoff(sessionId: string): Promise<boolean> {
    return this.#swapHandoff(sessionId, (s) => s !== "pending" && s !== "running", "pending");
  }

  /** Claims a pending handoff (compare-and-swap on the versionstamp). */
  claimHandoff(sessionId: string): Promise<boolean> {
    return this.#swapHandoff(sessionId, (s) => s === "pending", "running");
  }

  /** The handoff state, or `null`. */
  async getHandoffState(sessionId: string): Promise<string | null> {
    return (await this.getSession(sessionId))?.handoffState ?? null;
  }

  /** Every message's session exists and ids are below the counter. */
  async checkInvariants(): Promise<string[]> {
    const problems: string[] = [];
    const next = Number((await this.#kv.get<bigint>(["next_id"])).value ?? 0n);
    for await (const entry of this.#kv.list<StoredMessage>({ prefix: ["message"] })) {
      const [, sessionId, id] = entry.key as [string, string, number];
      if (!(await this.#kv.get(["session", sessionId])).value) {
        problems.push(`message ${id} belongs to missing session ${sessionId}`);
      }
      if (id > next) problems.push(`message ${id} is past the id counter ${next}`);
    }
    return problems;
  }

  /** Closes the database. */
  close(): void {
    this.#kv.close();
  }
}

/**
 * Opens the store (the target contract's entry point).
 *
 * @param path The database file.
 * @param _options Ignored: Deno KV has no journal-mode knob.
 * @returns The store.
 * @example
 * ```ts ignore
 * import { openStore } from "./deno_kv.ts";
 * const store = await openStore(`${Deno.makeTempDirSync()}/s.kv`, {});
 * store.close();
 * ```
 */
export async function openStore(path: string, _options: StoreOptions): Promise<DenoKvStore> {
  if (typeof Deno.openKv !== "function") {
    throw new Error(
      "Cannot open a Deno KV store: Deno.openKv is missing (run Deno with --unstable-kv)",
    );
  }
  return new DenoKvStore(await Deno.openKv(path));
}
