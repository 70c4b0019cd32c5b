// Under `--quick` each on-disk mode is judged once per run. The default leg that runs in
// the very on-disk mode of a leg asked for by name (the reference store's default is DELETE
// on a WAL-reset-vulnerable SQLite and WAL on a fixed one) would repeat that leg's work, and
// so would a leg on a second library that runs in the mode it ran in on the first (DELETE
// on the system SQLite and on the fixed one): its cell 1 still runs, to show the mode it ran
// in, and its other cells and the later tiers are left to the twin. The full run judges
// both: a store may set up its default differently from the same mode asked for by name
// (its `synchronous`, say), and a library may differ in what the store meets.
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

/** The leg × library that judges a twinned leg's cells, and the mode both ran in. */
export interface Twin {
  leg: string;
  library: string;
  mode: string;
}

/** A leg on a library, in a repetition (the first when not said). */
export interface LegAt {
  leg: string;
  library: string;
  run?: number;
}

/**
 * What cell 1 found on each leg × library, as each leg reports it: the later work on a leg
 * (its other cells, the later tiers) waits on it, and a leg that may be twinned on the legs
 * it may be twin to.
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
   * Whether the leg may have a twin on an earlier library: that library's same leg was
   * honoured (its cell 1 ran). Known before the leg itself runs.
   *
   * @param at The leg on its library.
   * @param libraries The libraries in the run's order.
   */
  async mayTwinAcross(at: LegAt, libraries: readonly string[]): Promise<boolean> {
    for (const library of libraries.slice(0, Math.max(0, libraries.indexOf(at.library)))) {
      if ((await this.of({ ...at, library })).honoured) return true;
    }
    return false;
  }

  /**
   * The leg's twin, once its cell 1 and every leg it could be twin to recorded: for the
   * default leg, the leg asked for by name on its library ({@linkcode twinLeg}); then,
   * given `libraries`, the same leg on an earlier library, honoured there in the very mode.
   *
   * @param at The leg on its library.
   * @param run The legs asked for and, to twin across libraries, the libraries in order.
   * @returns The twin, or undefined.
   */
  async twinOf(
    at: LegAt,
    run: { legs: readonly string[]; libraries?: readonly string[] },
  ): Promise<Twin | undefined> {
    const found = await this.of(at);
    if (!found.honoured || found.mode === undefined) return undefined;
    if (at.leg === "default") {
      const named = new Map<string, LegFound>();
      for (const leg of run.legs) {
        if (leg !== "default") named.set(leg, await this.of({ ...at, leg }));
      }
      const leg = twinLeg(found, named);
      if (leg !== undefined) return { leg, library: at.library, mode: found.mode };
    }
    const libraries = run.libraries ?? [];
    for (const library of libraries.slice(0, Math.max(0, libraries.indexOf(at.library)))) {
      const other = await this.of({ ...at, library });
      if (other.honoured && other.mode === found.mode) {
        return { leg: at.leg, library, mode: found.mode };
      }
    }
    return undefined;
  }

  /** Ends every wait: a leg that recorded nothing was not honoured. */
  settle(): void {
    for (const slot of this.#slots.values()) slot.resolve({ honoured: false });
  }
}

/**
 * The SKIP of a cell left to its twin.
 *
 * @param base The outcome's leg, library, clause and replay.
 * @param twin The twin and the mode both ran in.
 * @returns The outcome.
 */
export function leftToTwin(
  base: Pick<Outcome, "clause" | "cell" | "leg" | "library" | "replay" | "run">,
  twin: Twin,
): Outcome {
  const as = twin.library === base.library
    ? `as the ${twin.leg} leg on this library`
    : `as on the ${twin.library} library`;
  return {
    ...base,
    tier: "cells",
    status: "SKIP",
    reason:
      `--quick: the ${base.leg} leg ran in ${twin.mode}, ${as}, where this cell is judged (the full run judges both)`,
    skipKind: "judged-on-twin",
  };
}
