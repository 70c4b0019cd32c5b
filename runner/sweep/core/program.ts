// The crash sweep's workload, shared by its child (which runs it and dies at a crash
// point) and its parent (which runs it uncrashed to get the candidate states): the
// operations, the programs that own each crash point, the seeded store, and the state
// snapshot the oracle compares. Everything here is deterministic given the seed and the
// program, so the parent's uncrashed run is the child's run minus the crash.
import type {
  CellMessage,
  MaybePromise,
  Store,
  StoredSession,
} from "../../../cells/contract/target.ts";
import { seededRandom } from "../../../harness/seeded_random.ts";

/** The operations of the bounded sequences (issue 8), in enumeration order. */
export const SEQUENCE_OPS = [
  "append",
  "batch",
  "rotate",
  "rewind",
  "fork",
  "claim",
  "outbox",
] as const;

/** An operation of a bounded sequence; `outbox` is one outbox step. */
export type SequenceOp = typeof SEQUENCE_OPS[number];

/** An operation a program runs: one store write (plus its lock, for `rotate`). */
export type ProgramOp =
  | Exclude<SequenceOp, "outbox">
  | "record"
  | "attempt"
  | "deliver"
  | "fail"
  | "unknown"
  | "sweep";

/** The store methods each operation calls; a crash point `<method>:*` belongs to them. */
export const OP_METHODS: Record<ProgramOp, readonly string[]> = {
  append: ["appendMessage"],
  batch: ["appendMessages"],
  rotate: ["tryAcquireCompressionLock", "publishCompressionChild", "releaseCompressionLock"],
  rewind: ["rewindToMessage"],
  fork: ["forkSession"],
  claim: ["claimHandoff"],
  record: ["recordObligation"],
  attempt: ["markAttempting"],
  deliver: ["markDelivered"],
  fail: ["markFailed"],
  unknown: ["markUnknown"],
  sweep: ["sweepRecoverable"],
};

/** The other methods an operation needs: the seeded state and the snapshot. */
const OP_NEEDS: Record<ProgramOp, readonly string[]> = {
  append: [],
  batch: [],
  rotate: ["listSessions"],
  rewind: [],
  fork: ["listSessions"],
  claim: ["requestHandoff"],
  record: ["listObligations"],
  attempt: ["recordObligation", "listObligations"],
  deliver: ["recordObligation", "markAttempting", "listObligations"],
  fail: ["recordObligation", "listObligations"],
  unknown: ["recordObligation", "markAttempting", "listObligations"],
  sweep: ["recordObligation", "markAttempting", "listObligations"],
};

/**
 * Methods every program needs: to seed the store and read its state back (a store
 * without `listSessions` is read by the sessions its programs name: cell 1's methods
 * are enough for the append programs).
 */
export const BASE_METHODS = [
  "createSession",
  "appendMessage",
  "getMessages",
  "close",
] as const;

/** Messages per batch append (so `appendMessages:afterInsert` is reached twice a call). */
export const BATCH_SIZE = 2;

/** Obligations a dead process leaves for the `sweep` program (two pending, two attempting). */
export const DEAD_OWNER_OBLIGATIONS = 4;

/** Handoffs parked in the seeded store, one per `claim` (a program claims at most 3). */
export const PARKED_HANDOFFS = 3;

const thrice = (...ops: ProgramOp[]): ProgramOp[] => [...ops, ...ops, ...ops];

/**
 * The program that owns the crash points of a method: its operation three times (so
 * `@3` is reachable), each after what it needs. `sweep` takes over obligations of a dead
 * process, so its run starts from a store a short-lived child left behind; the first
 * takeover takes all four at once (its `afterClaim` is reached four times), so the second
 * and third find nothing, and their states check that an empty takeover changes nothing.
 */
export const POINT_PROGRAMS: Record<string, readonly ProgramOp[]> = {
  appendMessage: thrice("append"),
  appendMessages: thrice("batch"),
  claimHandoff: thrice("claim"),
  tryAcquireCompressionLock: thrice("rotate"),
  publishCompressionChild: thrice("rotate"),
  releaseCompressionLock: thrice("rotate"),
  rewindToMessage: thrice("rewind"),
  forkSession: thrice("fork"),
  recordObligation: thrice("record"),
  markAttempting: thrice("record", "attempt"),
  markDelivered: thrice("record", "attempt", "deliver"),
  markFailed: thrice("record", "fail"),
  markUnknown: thrice("record", "attempt", "unknown"),
  sweepRecoverable: thrice("sweep"),
};

/** The method a crash point belongs to: the part before the colon. */
export function methodOf(point: string): string {
  return point.slice(0, point.indexOf(":"));
}

/** Whether an operation owns a crash point (it calls the point's method). */
export function owns(op: ProgramOp, point: string): boolean {
  return OP_METHODS[op].includes(methodOf(point));
}

/** Whether a program starts from obligations of a dead process. */
export function needsDeadOwner(program: readonly ProgramOp[]): boolean {
  return program.includes("sweep");
}

/**
 * The store methods a program needs that the store lacks.
 *
 * @param program The operations.
 * @param methods The store's methods.
 * @returns The missing names.
 */
export function missingMethods(
  program: readonly ProgramOp[],
  methods: readonly string[],
): string[] {
  const needed = new Set<string>(BASE_METHODS);
  for (const op of program) {
    for (const m of [...OP_METHODS[op], ...OP_NEEDS[op]]) needed.add(m);
  }
  return [...needed].filter((m) => !methods.includes(m));
}

/**
 * Expands a bounded sequence into the program that runs it: the n-th outbox step is the
 * next move of the sender protocol (record, then attempt, then deliver).
 *
 * @param sequence The sequence.
 * @returns The program.
 */
export function expandSequence(sequence: readonly SequenceOp[]): ProgramOp[] {
  const protocol: ProgramOp[] = ["record", "attempt", "deliver"];
  let steps = 0;
  return sequence.map((op) => op === "outbox" ? protocol[steps++ % protocol.length]! : op);
}

/**
 * How many times one call of `op` reaches `point`: once per call for every point of
 * its methods, except the per-row points (a batch inserts `BATCH_SIZE` rows; the sweep
 * takes over `DEAD_OWNER_OBLIGATIONS` on its first call, none after). The sweep checks
 * this model on every state: the child must die in the operation it predicts.
 *
 * @param op The operation.
 * @param point The crash point.
 * @param call Which call of `op` in the program (0-based), for the sweep.
 * @returns The number of hits.
 */
export function hitsPerCall(op: ProgramOp, point: string, call = 0): number {
  if (!owns(op, point)) return 0;
  if (point === "appendMessages:afterInsert") return BATCH_SIZE;
  if (point === "sweepRecoverable:afterClaim") return call === 0 ? DEAD_OWNER_OBLIGATIONS : 0;
  return 1;
}

const WORDS = [
  "amber",
  "basalt",
  "cedar",
  "delta",
  "ember",
  "fjord",
  "garnet",
  "harbor",
  "iris",
  "juniper",
  "kelp",
  "lumen",
];

/** Seeded text: the same seed and tag give the same words in every process. */
function text(seed: number, tag: string): string {
  let h = seed >>> 0;
  for (const ch of tag) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  const random = seededRandom(h);
  const words = Array.from({ length: 3 }, () => WORDS[Math.floor(random() * WORDS.length)]);
  return `${tag} ${words.join(" ")}`;
}

/** A store with the optional batch append of the reference store. */
export type SweepStore = Store & {
  appendMessages?(sessionId: string, messages: CellMessage[]): MaybePromise<number[]>;
};

/**
 * Seeds the small store every state starts from: `main` with a system message and three
 * user/assistant turns (three rewinds always find a user message), and
 * `PARKED_HANDOFFS` sessions parked for handoff.
 *
 * @param store The store, freshly created.
 * @param seed The seed of the message texts.
 */
export async function seedStore(store: SweepStore, seed: number): Promise<void> {
  await store.createSession("main");
  const turns: CellMessage[] = [{ role: "system", content: text(seed, "seed") }];
  for (let t = 0; t < 3; t++) {
    turns.push({ role: "user", content: text(seed, `seed-u${t}`) });
    turns.push({ role: "assistant", content: text(seed, `seed-a${t}`) });
  }
  for (const message of turns) await store.appendMessage("main", message);
  if (store.requestHandoff) {
    for (let h = 0; h < PARKED_HANDOFFS; h++) {
      await store.createSession(`h${h}`);
      if (!await store.requestHandoff(`h${h}`, "telegram")) {
        throw new Error(`sweep setup: could not park the handoff of h${h}`);
      }
    }
  }
}

/**
 * Leaves open obligations owned by this process (which then exits, so a later
 * `sweepRecoverable` takes them over): two pending, two attempting.
 *
 * @param store The store.
 * @param seed The seed of the payloads.
 */
export async function seedDeadOwner(store: SweepStore, seed: number): Promise<void> {
  for (let i = 0; i < DEAD_OWNER_OBLIGATIONS; i++) {
    const o = await store.recordObligation!({
      sessionId: "main",
      messageRef: `dead-${i}`,
      content: text(seed, `dead-${i}`),
    });
    if (i >= DEAD_OWNER_OBLIGATIONS / 2) {
      if (await store.markAttempting!(o.obligationId, o.deliveryFence) === null) {
        throw new Error(`sweep setup: markAttempting lost on ${o.obligationId}`);
      }
    }
  }
}

type Own = { id: string; fence: number; state: "pending" | "attempting" | "done" };

/**
 * Runs a program's operations one by one, tracking what each next operation acts on
 * (the tip of the rotation chain, the next parked handoff, its own obligations).
 */
export class ProgramRunner {
  #store: SweepStore;
  #seed: number;
  #holder: string;
  #current = "main";
  #claims = 0;
  #sweeps = 0;
  #own: Own[] = [];

  /**
   * @param store The store.
   * @param seed The seed of the message texts.
   */
  constructor(store: SweepStore, seed: number) {
    this.#store = store;
    this.#seed = seed;
    this.#holder = `sweep:pid=${Deno.pid}`;
  }

  /**
   * Runs operation `i` of the program.
   *
   * @param op The operation.
   * @param i Its index in the program (names what it creates).
   * @returns What the store returned, as data equal across runs of the same program
   * (row and obligation ids are the store's business: they are left out).
   */
  async run(op: ProgramOp, i: number): Promise<unknown> {
    const store = this.#store;
    const seed = this.#seed;
    switch (op) {
      case "append":
        await store.appendMessage(this.#current, { role: "user", content: text(seed, `u${i}`) });
        return "appended";
      case "batch": {
        const ids = await store.appendMessages!(this.#current, [
          { role: "user", content: text(seed, `q${i}`) },
          { role: "assistant", content: text(seed, `r${i}`) },
        ]);
        return ids.length;
      }
      case "rotate":
        return await this.#rotate(i);
      case "rewind": {
        const active = await store.getMessages(this.#current);
        const target = active.findLast((m) => m.role === "user");
        if (!target) throw new Error(`sweep: no user message to rewind to in ${this.#current}`);
        return await store.rewindToMessage!(this.#current, target.id, {
          expectedActiveIds: active.map((m) => m.id),
        });
      }
      case "fork": {
        const active = await store.getMessages(this.#current);
        const at = active.at(-1);
        if (!at) throw new Error(`sweep: nothing to fork in ${this.#current}`);
        const branch = `fork-${i}`;
        await store.forkSession!(this.#current, at.id, branch);
        return branch;
      }
      case "claim":
        return await store.claimHandoff!(`h${this.#claims++}`);
      case "record":
      case "attempt":
      case "deliver":
      case "fail":
      case "unknown":
        return await this.#outbox(op, i);
      case "sweep": {
        const taken = await store.sweepRecoverable!({ idempotentTransport: this.#sweeps++ === 0 });
        return taken.map((t) => [t.action, t.obligation.content]).sort();
      }
    }
  }

  /** Takes the lock of the chain's tip, publishes its continuation, releases the lock. */
  async #rotate(i: number): Promise<string> {
    const store = this.#store;
    const seed = this.#seed;
    const parentId = this.#current;
    const childId = `rot-${i}`;
    if (!await store.tryAcquireCompressionLock!(parentId, this.#holder, 60_000)) {
      throw new Error(`sweep: could not take the compression lock of ${parentId}`);
    }
    // The continuation carries three user turns, so rewinds after it still work.
    const messages: CellMessage[] = [{ role: "system", content: text(seed, `sum${i}`) }];
    for (let t = 0; t < 3; t++) {
      messages.push({ role: "user", content: text(seed, `c${i}u${t}`) });
      if (t < 2) messages.push({ role: "assistant", content: text(seed, `c${i}a${t}`) });
    }
    await store.publishCompressionChild!({ parentId, childId, holder: this.#holder, messages });
    await store.releaseCompressionLock!(parentId, this.#holder);
    this.#current = childId;
    return childId;
  }

  /** One step of the sender protocol on this program's own obligations. */
  async #outbox(
    op: "record" | "attempt" | "deliver" | "fail" | "unknown",
    i: number,
  ): Promise<unknown> {
    const store = this.#store;
    switch (op) {
      case "record": {
        const o = await store.recordObligation!({
          sessionId: "main",
          messageRef: `ref-${i}`,
          content: text(this.#seed, `o${i}`),
        });
        this.#own.push({ id: o.obligationId, fence: o.deliveryFence, state: "pending" });
        return [o.content, o.state, o.deliveryFence];
      }
      case "attempt": {
        const o = this.#find("pending", "first");
        const fence = await store.markAttempting!(o.id, o.fence);
        if (fence === null) throw new Error(`sweep: markAttempting lost on ${o.id}`);
        Object.assign(o, { fence, state: "attempting" });
        return fence;
      }
      case "deliver": {
        const o = this.#find("attempting", "first");
        o.state = "done";
        return await store.markDelivered!(o.id, o.fence);
      }
      case "fail": {
        const o = this.#find("pending", "last");
        o.state = "done";
        return await store.markFailed!(o.id, o.fence, "sweep: the receiver refused it");
      }
      case "unknown": {
        const o = this.#find("attempting", "last");
        o.state = "done";
        return await store.markUnknown!(o.id, o.fence, "sweep: the send timed out");
      }
    }
  }

  /**
   * A runner for a fresh process on a recovered store: it acts on the tip of `main`'s
   * rotation chain and the first handoff still parked, as the program's runner would
   * have, without knowing the program.
   *
   * @param store The recovered store.
   * @param seed The seed of the message texts.
   * @returns The runner.
   */
  static async resumed(store: SweepStore, seed: number): Promise<ProgramRunner> {
    const runner = new ProgramRunner(store, seed);
    if (store.listSessions) {
      const sessions = await store.listSessions();
      for (
        let tip = sessions.find((s) =>
          s.parentSessionId === runner.#current && s.id.startsWith("rot-")
        );
        tip;
        tip = sessions.find((s) => s.parentSessionId === runner.#current && s.id.startsWith("rot-"))
      ) {
        runner.#current = tip.id;
      }
    }
    if (store.requestHandoff && store.getHandoffState) {
      while (
        runner.#claims < PARKED_HANDOFFS &&
        await store.getHandoffState(`h${runner.#claims}`) !== "pending"
      ) runner.#claims++;
    }
    return runner;
  }

  /** Whether a `claim` has a parked handoff left to claim. */
  get canClaim(): boolean {
    return this.#claims < PARKED_HANDOFFS;
  }

  #find(state: Own["state"], which: "first" | "last"): Own {
    const o = which === "first"
      ? this.#own.find((x) => x.state === state)
      : this.#own.findLast((x) => x.state === state);
    if (!o) throw new Error(`sweep: no ${state} obligation of this program`);
    return o;
  }
}

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
 * has one. Programs that create sessions (rotate, fork) need `listSessions`.
 */
async function namedSessions(store: SweepStore): Promise<StoredSession[]> {
  const ids = ["main"];
  if (store.requestHandoff) ids.push(...Array.from({ length: PARKED_HANDOFFS }, (_, h) => `h${h}`));
  const out: StoredSession[] = [];
  for (const id of ids) {
    const found = store.getSession
      ? await store.getSession(id)
      : { id, parentSessionId: null, endedAt: null, endReason: null };
    if (found) out.push(found);
  }
  return out;
}

/**
 * What a fresh process does on a recovered state to show that it takes the clause's
 * own operation (resume after recovery): the operation the crash interrupted again (an
 * outbox step: a whole new obligation, recorded, attempted and delivered; a claim, when
 * a parked handoff is left), then an append, each as far as the store has the methods.
 * A takeover (`sweep`) is not repeated: what it takes depends on whose process is alive.
 *
 * @param op The interrupted operation.
 * @param methods The store's methods.
 * @returns The operations, always at least one append.
 * @example
 * ```ts
 * import { continuation } from "./program.ts";
 * console.log(continuation("rotate", ["listSessions", "tryAcquireCompressionLock"])); // ["append"]
 * ```
 */
export function continuation(op: ProgramOp, methods: readonly string[]): ProgramOp[] {
  const own: Record<ProgramOp, ProgramOp[]> = {
    append: ["append"],
    batch: ["batch"],
    rotate: ["rotate"],
    rewind: ["rewind"],
    fork: ["fork"],
    claim: ["claim"],
    record: ["record", "attempt", "deliver"],
    attempt: ["record", "attempt", "deliver"],
    deliver: ["record", "attempt", "deliver"],
    fail: ["record", "fail"],
    unknown: ["record", "attempt", "unknown"],
    sweep: [],
  };
  const ops = [...own[op], "append" as const];
  return missingMethods(ops, methods).length ? ["append"] : ops;
}

/** The first index of the continuation's operations: names apart from the program's. */
export const CONTINUATION_INDEX = 100;

/**
 * Parses a program written as operation names joined by `+`.
 *
 * @param spec E.g. `append+rotate+fork`.
 * @returns The operations.
 * @throws {Error} On an unknown operation.
 */
export function parseProgram(spec: string): ProgramOp[] {
  return spec.split("+").map((name) => {
    if (!(name in OP_METHODS)) {
      throw new Error(
        `Unknown sweep operation "${name}": use one of ${Object.keys(OP_METHODS).join(", ")}`,
      );
    }
    return name as ProgramOp;
  });
}
