// The crash sweep's workload, shared by its child (which runs it and dies at a crash
// point) and its parent (which runs it uncrashed to get the candidate states): the seeded
// store and the runner of a program's operations. Everything here is deterministic given
// the seed and the program, so the parent's uncrashed run is the child's run minus the crash.
import type { CellMessage, MaybePromise, Store } from "../../../cells/contract/target.ts";
import { answerOf, verdict } from "../../../cells/contract/typed.ts";
import { seededRandom } from "../../../harness/seeded_random.ts";
import { DEAD_OWNER_OBLIGATIONS, PARKED_HANDOFFS, type ProgramOp, REQUESTABLE } from "./ops.ts";

/** The session `end`, `reopen` and `ensure` act on. */
export const ENDABLE = "ens";
/** The session `ghost` asks to append to: it never exists. */
export const GHOST = "ghost";
/** The holder of `refresh`'s lease: no `pid=`, so only its expiry decides (the same in every process). */
export const LEASE_HOLDER = "sweep-lease";
/** The lease `refresh` takes, then renews to twice as long. */
export const LEASE_MS = 3_600_000;

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
  if (store.requestHandoff && store.listPendingHandoffs) {
    // Two messages each: a list joined with the messages would name them twice.
    for (let p = 0; p < REQUESTABLE; p++) {
      await store.createSession(`p${p}`);
      for (const role of ["user", "assistant"] as const) {
        await store.appendMessage(`p${p}`, { role, content: text(seed, `p${p}-${role}`) });
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
  #requests = 0;
  #leased = false;
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
      default:
        return await this.#clauseOp(op, i);
    }
  }

  /** The operations of cells 10 to 13: ends and reopens, a lease, a handoff, a refusal. */
  async #clauseOp(op: ProgramOp, i: number): Promise<unknown> {
    const store = this.#store;
    switch (op) {
      case "ensure":
        await store.ensureSession!(ENDABLE);
        return "ensured";
      case "end":
        return await store.endSession!(ENDABLE, `sweep end ${i}`);
      case "reopen":
        return await store.reopenSession!(ENDABLE);
      case "refresh": {
        // The first takes the lease (a lock write the snapshot does not show), then renews it.
        const took = this.#leased ||
          await store.tryAcquireCompressionLock!("main", LEASE_HOLDER, LEASE_MS);
        this.#leased = true;
        return [took, await store.refreshCompressionLock!("main", LEASE_HOLDER, 2 * LEASE_MS)];
      }
      case "request":
        return await store.requestHandoff!(`p${this.#requests++ % REQUESTABLE}`, "telegram");
      case "ghost": {
        const answer = await answerOf(() =>
          store.appendMessage(GHOST, { role: "user", content: text(this.#seed, `g${i}`) })
        );
        return { answer: verdict(answer), name: answer.name ?? null };
      }
      default:
        throw new Error(`sweep: unknown operation ${op}`);
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
