// Under `--quick`, the default leg that runs in the very on-disk mode of a leg asked for by
// name (the reference store's default is DELETE on a WAL-reset-vulnerable SQLite and WAL on
// a fixed one) would repeat that leg's work: its cell 1 still runs, to show the mode it ran
// in, and its other cells are left to the twin. The full run judges both: a store may set up
// its default differently from the same mode asked for by name (its `synchronous`, say).
import type { Outcome } from "./result.ts";

/** Per leg × library: whether cell 1 ran there, and the one on-disk mode it observed. */
export interface LegFound {
  /** Cell 1 ran (not SKIPPED). */
  honoured: boolean;
  /** The on-disk mode of every kill's observation, when they all agree. */
  mode?: string;
}

/**
 * What a leg's cell 1 found.
 *
 * @param cell1 Cell 1's outcome on the leg (none: it reported nothing).
 * @returns Whether the leg was honoured, and its one observed mode.
 */
export function legFound(
  cell1: { status: string; figures?: Outcome["figures"] } | undefined,
): LegFound {
  const modes = Object.keys(cell1?.figures?.legObservations ?? {});
  return {
    honoured: cell1 !== undefined && cell1.status !== "SKIP",
    ...(modes.length === 1 ? { mode: modes[0] } : {}),
  };
}

/**
 * The leg asked for by name that the default leg ran as: honoured there, in the very mode
 * the default leg's cell 1 observed.
 *
 * @param found What the default leg's cell 1 found.
 * @param named What cell 1 found on each leg asked for by name, on the same library.
 * @returns The twin's name, or undefined.
 */
export function twinLeg(found: LegFound, named: ReadonlyMap<string, LegFound>): string | undefined {
  if (!found.honoured || found.mode === undefined) return undefined;
  for (const [leg, other] of named) {
    if (other.honoured && other.mode === found.mode) return leg;
  }
  return undefined;
}

/** A leg on a library, in a repetition (the first when not said). */
export interface LegAt {
  leg: string;
  library: string;
  run?: number;
}

/**
 * What cell 1 found on each leg × library, as each leg reports it: the later work on a leg
 * (its other cells, the later tiers) waits on it, and the default leg on its named legs.
 */
export class LegsFound {
  #slots = new Map<string, PromiseWithResolvers<LegFound>>();

  #slot(at: LegAt): PromiseWithResolvers<LegFound> {
    const key = `${at.run ?? 1}|${at.library}|${at.leg}`;
    if (!this.#slots.has(key)) this.#slots.set(key, Promise.withResolvers<LegFound>());
    return this.#slots.get(key)!;
  }

  /** Records what cell 1 found on a leg; the first record stands. */
  record(at: LegAt, found: LegFound): void {
    this.#slot(at).resolve(found);
  }

  /** What cell 1 found on a leg, once recorded. */
  of(at: LegAt): Promise<LegFound> {
    return this.#slot(at).promise;
  }

  /**
   * The default leg's twin on its library ({@linkcode twinLeg}), once the default leg and
   * every leg asked for by name recorded.
   */
  async twinOf(at: Omit<LegAt, "leg">, legs: readonly string[]): Promise<string | undefined> {
    const found = await this.of({ ...at, leg: "default" });
    const named = new Map<string, LegFound>();
    for (const leg of legs) if (leg !== "default") named.set(leg, await this.of({ ...at, leg }));
    return twinLeg(found, named);
  }

  /** Ends every wait: a leg that recorded nothing was not honoured. */
  settle(): void {
    for (const slot of this.#slots.values()) slot.resolve({ honoured: false });
  }
}

/**
 * The SKIP of a default-leg cell left to its twin.
 *
 * @param base The outcome's leg, library, clause and replay.
 * @param twin The twin leg and the mode both ran in.
 * @returns The outcome.
 */
export function leftToTwin(
  base: Pick<Outcome, "clause" | "cell" | "leg" | "library" | "replay" | "run">,
  twin: { leg: string; mode: string },
): Outcome {
  return {
    ...base,
    tier: "cells",
    status: "SKIP",
    reason:
      `--quick: the default leg ran in ${twin.mode}, as the ${twin.leg} leg on this library, where this cell is judged (the full run judges both)`,
    skipKind: "judged-on-twin",
  };
}
