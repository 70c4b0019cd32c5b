// A lease's witness: when a cell must act past a compression lock's lease, the caller's
// clock cannot say when the store lets the lease go. A store may keep its expiries in whole
// seconds, rounded up (a lease of 300 ms then lasts up to 1.3 s), which is safe: a lease
// lasts at least as long as asked. So right after the watched lease is taken, a lease of
// the same length is taken on a session of its own, and the wait ends once another holder
// can take that one over. A store sets an expiry from when it grants the lease (in
// milliseconds, or rounded up), so the witness, granted later, ends no sooner: once it has
// lapsed, the watched lease has too, as the store sees it.
import { answerOf, describeAnswer, verdict } from "../contract/typed.ts";
import type { Store } from "../contract/target.ts";
import type { Child } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { stopChild } from "./kill.ts";
import type { CellRun } from "../engine/cell.ts";

/**
 * How much longer than asked a store may keep a lease: one second of rounding, and time
 * for a loaded machine. A lease another holder still cannot take this long after it
 * lapsed never lapses: the store's FAIL.
 */
export const LEASE_OVERRUN_MS = 10_000;

/**
 * The witness's holder, named with this process's pid (alive while it waits), so that only
 * the lease's expiry decides under any reading of `pid=`: a store that takes a lock with no
 * `pid=` over as a dead holder's would otherwise let the witness go at once.
 */
const HOLDER = `cell-lease-witness:pid=${Deno.pid}`;
const TAKER = "cell-lease-witness-taker";
const HOUR = 3_600_000;

/** The calls a witness makes. */
export type LeaseStore = Pick<Store, "createSession" | "tryAcquireCompressionLock">;

/**
 * A lease taken right after the watched one, for as long, on a session of its own.
 *
 * @example
 * ```ts ignore
 * import { awaitLapse, type LeaseWitness, takeWitness } from "./lease_witness.ts";
 * const witness: LeaseWitness = await takeWitness(store, { session: "s-witness", ttlMs: 300 });
 * await awaitLapse(store, witness, { what: "the holder's lease to lapse" });
 * ```
 */
export interface LeaseWitness {
  /** Its session. */
  session: string;
  /** Its lease, as long as the watched one's. */
  ttlMs: number;
  /** When the store granted it (ms since the epoch). */
  takenAt: number;
}

/**
 * Options of {@linkcode takeWitness}.
 *
 * @example
 * ```ts ignore
 * import { takeWitness, type WitnessOptions } from "./lease_witness.ts";
 * const options: WitnessOptions = { session: "s-witness", ttlMs: 300, created: true };
 * await takeWitness(store, options);
 * ```
 */
export interface WitnessOptions {
  /** The witness's session: one of its own, never locked before. */
  session: string;
  /** The watched lease's length. */
  ttlMs: number;
  /** The session was created already (default: it is created first). */
  created?: boolean;
}

/**
 * Takes a witness of the lease taken just before: creates its session (unless created)
 * and takes its free lock for as long.
 *
 * @param store The store, open.
 * @param options Its session, the lease's length.
 * @returns The witness.
 * @throws {Error} When the store refuses the free lock: the store's FAIL.
 * @example
 * ```ts ignore
 * import { takeWitness } from "./lease_witness.ts";
 * const witness = await takeWitness(store, { session: "s-witness", ttlMs: 300 });
 * ```
 */
export async function takeWitness(
  store: LeaseStore,
  options: WitnessOptions,
): Promise<LeaseWitness> {
  const { session, ttlMs } = options;
  if (!options.created) await store.createSession(session);
  const answer = await answerOf(() => store.tryAcquireCompressionLock!(session, HOLDER, ttlMs));
  if (verdict(answer) !== "accepted") {
    throw new Error(
      `Cannot take the free compression lock of "${session}" for ${ttlMs} ms: ${
        describeAnswer(answer)
      }`,
    );
  }
  return { session, ttlMs, takenAt: Date.now() };
}

/**
 * Options of {@linkcode awaitLapse}.
 *
 * @example
 * ```ts ignore
 * import { awaitLapse, type LapseOptions } from "./lease_witness.ts";
 * const options: LapseOptions = { what: "the holder's lease to lapse", children: [holder] };
 * await awaitLapse(store, witness, options);
 * ```
 */
export interface LapseOptions {
  /** What is awaited, for messages. */
  what: string;
  /** Children whose early exit ends the wait with their stderr. */
  children?: readonly Child[];
  /** How much longer than asked the lease may last (default {@linkcode LEASE_OVERRUN_MS}). */
  overrunMs?: number;
}

/**
 * Waits until another holder can take the witness's lock over: the lease it witnesses
 * has lapsed, on the caller's clock and on the store's. Every refusal before then is
 * expected; a throw counts as one (a writer of the same file may hold it a moment).
 *
 * @param store The store the witness was taken on.
 * @param witness The witness.
 * @param options What is awaited, watched children.
 * @returns How long after the asked lease ended the store let it go (ms).
 * @throws {Error} When no other holder could take it {@linkcode LEASE_OVERRUN_MS} past
 *   its lease: the store never lets a lapsed lease go (its FAIL).
 * @example
 * ```ts ignore
 * import { awaitLapse, takeWitness } from "./lease_witness.ts";
 * const witness = await takeWitness(store, { session: "s-witness", ttlMs: 300 });
 * console.log(await awaitLapse(store, witness, { what: "the lease to lapse" }));
 * ```
 */
export async function awaitLapse(
  store: LeaseStore,
  witness: LeaseWitness,
  options: LapseOptions,
): Promise<number> {
  const { session, ttlMs, takenAt } = witness;
  const overrun = options.overrunMs ?? LEASE_OVERRUN_MS;
  const ends = takenAt + ttlMs;
  let last = "never asked";
  const taken = async () => {
    if (Date.now() <= ends) return false;
    const answer = await answerOf(() => store.tryAcquireCompressionLock!(session, TAKER, HOUR));
    last = describeAnswer(answer);
    return verdict(answer) === "accepted";
  };
  const deadlineMs = Math.max(0, ends - Date.now()) + overrun;
  // Deadline errors say what the store answered; a child's exit keeps the wait's own error.
  const children = options.children ?? [];
  await waitFor(taken, { what: options.what, deadlineMs, children })
    .catch((error) => {
      if (children.some((child) => child.exited)) throw error;
      throw new Error(
        `Cannot take over a lapsed compression lock (${options.what}): another holder was still refused the ${ttlMs} ms lease of "${session}" ${
          Date.now() - ends
        } ms after it ended (${last}); a lease may outlast what was asked by the store's clock granularity, not by ${overrun} ms`,
        { cause: error },
      );
    });
  return Date.now() - ends;
}

/**
 * Options of {@linkcode stopPastLease}.
 *
 * @example
 * ```ts ignore
 * import type { PastLease } from "./lease_witness.ts";
 * const lease: PastLease = { who: "the holder", acquiredAt, leaseMs: 300, beats: () => 0 };
 * ```
 */
export interface PastLease {
  /** Who the stopped child is in messages, e.g. `cell 7 before: the owner`. */
  who: string;
  /** When it took its lease (ms since the epoch, its own report). */
  acquiredAt: number;
  /** Its lease's length. */
  leaseMs: number;
  /** Its heartbeat count, as it reports it. */
  beats: () => number;
  /** The store and the witness taken right after its lease, when the store ends the lease. */
  lapse?: { store: LeaseStore; witness: LeaseWitness };
}

/**
 * What {@linkcode stopPastLease} saw.
 *
 * @example
 * ```ts ignore
 * import { stopPastLease, type StoppedPastLease } from "./lease_witness.ts";
 * const stopped: StoppedPastLease = await stopPastLease(holder, lease);
 * ```
 */
export interface StoppedPastLease {
  /** The heartbeats the child made while stopped (at most one, under way at the stop). */
  beats: number;
  /** How long after the asked lease ended the store let its witness go (ms), when given one. */
  overrunMs: number | undefined;
}

/**
 * Stops a child holding a lease (asserted stopped) and waits past its lease: on the
 * caller's clock, stopped 100 ms at least, then as the store sees it when a witness is given.
 *
 * @param child The lease's holder, waiting for its turn.
 * @param lease Who it is, its lease, its heartbeats, the witness.
 * @returns The heartbeats it made while stopped (at most one, under way at the stop), and
 *   how long after the asked lease ended the store let the witness go.
 * @throws {Error} When the witness never lapses (the store's FAIL), or the child exits.
 * @example
 * ```ts ignore
 * import { stopPastLease } from "./lease_witness.ts";
 * const stalled = await stopPastLease(holder, { who: "the holder", acquiredAt, leaseMs, beats });
 * ```
 */
export async function stopPastLease(child: Child, lease: PastLease): Promise<StoppedPastLease> {
  const { who, leaseMs } = lease;
  await stopChild(child, who);
  // The beat at the stop is read once the child is frozen.
  const beatAtStop = lease.beats();
  // A bounded wait on the clock: the lease is time.
  const expiry = Math.max(lease.acquiredAt + leaseMs, Date.now() + 100) + 50;
  await waitFor(() => Date.now() > expiry, {
    what: `${who}: its lease to end on the clock`,
    deadlineMs: leaseMs + 10_000,
    children: [child],
  });
  const overrunMs = lease.lapse
    ? await awaitLapse(lease.lapse.store, lease.lapse.witness, {
      what: `${who}: its lease to lapse`,
      children: [child],
    })
    : undefined;
  return { beats: lease.beats() - beatAtStop, overrunMs };
}

/**
 * Notes in the cell's figures (`leaseOverrunMs`) the longest a store kept a watched lease
 * past its end, as its witnesses saw it (to the wait's polling): up to a second more for a
 * store that keeps expiries in whole seconds than for one that keeps milliseconds. Nothing
 * when none was watched.
 *
 * @param ctx The cell's run.
 * @param overruns What each watch saw ({@linkcode StoppedPastLease}'s `overrunMs`).
 * @example
 * ```ts ignore
 * import { noteLeaseOverrun } from "./lease_witness.ts";
 * noteLeaseOverrun(ctx, [12, undefined, 940]); // leaseOverrunMs: 940
 * ```
 */
export function noteLeaseOverrun(ctx: CellRun, overruns: readonly (number | undefined)[]): void {
  const seen = overruns.filter((overrun) => overrun !== undefined);
  if (!seen.length) return;
  const before = Number(ctx.figures.leaseOverrunMs) || 0;
  ctx.note("leaseOverrunMs", Math.max(before, ...seen));
}
