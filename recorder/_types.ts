// The types the power-loss states are made of: a crash state, the options and figures of
// their enumeration, a torn write, and what `_torn.ts` needs of the enumeration (pending
// operations, choices). Re-exported by `crash_states.ts`, the public surface.
import type { FileSet, Inode, Op, Profile } from "./_fs_model.ts";

/**
 * Where an enumerated torn state cut a write: the file, the write's record, the file
 * offset of the cut, the boundary it is (`512`, `4096`, or `byte` for the cut one byte
 * before the write's end), and what the part after the cut holds.
 *
 * @example
 * ```ts
 * import type { TornWrite } from "./crash_states.ts";
 * const torn: TornWrite = { file: "log.jsonl", seq: 12, at: 1023, boundary: "byte", fill: "zero" };
 * console.log(`${torn.file} cut at ${torn.at} (${torn.boundary}), ${torn.fill}`);
 * ```
 */
export interface TornWrite {
  /** The file's name in the watched folder. */
  file: string;
  /** The write's record. */
  seq: number;
  /** The file offset of the cut: bytes before it are the write's, from it on `fill`. */
  at: number;
  /** What the cut is: a 512-byte or 4 KiB sector boundary, or one byte before the end. */
  boundary: "512" | "4096" | "byte";
  /** The part after the cut: zeros, or seeded garbage. */
  fill: "zero" | "garbage";
}

/**
 * One crash state: files plus the acknowledgements made before the crash.
 *
 * @example
 * ```ts
 * import type { CrashState } from "./crash_states.ts";
 * function describe(state: CrashState): string {
 *   return `${state.label}: ${state.files.size} files, ${state.acks.length} acknowledged`;
 * }
 * ```
 */
export interface CrashState {
  /** The log position of the crash: the seq of the first call that did not happen. */
  at: number;
  /** How the state was made, e.g. `before #12 (fsync): subset 5`. */
  label: string;
  /** The files (computed when first read). */
  readonly files: FileSet;
  /**
   * Identifies the files: two states with one key hold the same files (states that hold
   * the same files may still differ in key), so an oracle can reuse a verdict.
   */
  key: string;
  /** The acknowledgement lines written before the crash. */
  acks: readonly string[];
  /** Set on an enumerated torn state: the file whose last unsynced write was cut, and where. */
  torn?: TornWrite;
}

/**
 * What {@linkcode powerLossStates} went through, filled in as it runs: the instants,
 * those where some file had an unsynced write that can be torn (2 bytes or more), and
 * the torn states it made. An instant with such a write always gives torn states, so
 * `torn === 0` while `tearable > 0` means the enumeration failed.
 *
 * @example
 * ```ts
 * import { type PowerLossStats, powerLossStates } from "./crash_states.ts";
 * import { parseLog } from "./log.ts";
 * const stats: PowerLossStats = { instants: 0, tearable: 0, torn: 0 };
 * for (const _ of powerLossStates(parseLog(new Uint8Array(0)), { profile: "posix", stats }));
 * console.log(stats); // { instants: 1, tearable: 0, torn: 0 }
 * ```
 */
export interface PowerLossStats {
  /** Crash instants visited. */
  instants: number;
  /** Instants where some file had an unsynced write of 2 bytes or more. */
  tearable: number;
  /** Torn states made (enumerated ones, not the random samples' tears). */
  torn: number;
}

/**
 * Options of {@linkcode powerLossStates}.
 *
 * @example
 * ```ts
 * import type { PowerLossOptions } from "./crash_states.ts";
 * const options: PowerLossOptions = { profile: "ext4-ordered", samples: 8, seed: 7 };
 * ```
 */
export interface PowerLossOptions {
  /** How names persist. */
  profile: Profile;
  /** The folder's durable content before the log began (default empty). */
  baseline?: FileSet;
  /** Enumerate every combination when an instant has at most this many (default 64). */
  exhaustive?: number;
  /** Random states per instant beyond that bound (default 12). */
  samples?: number;
  /** The first seed (default 1). */
  seed?: number;
  /** Whether random states tear writes at sectors (default true). */
  torn?: boolean;
  /** Whether random states reorder kept writes (default true). */
  reorder?: boolean;
  /** Only the last N instants (the end of the log counting as one; default all). */
  lastInstants?: number;
  /** Whether to enumerate the torn last writes (default true). */
  tornLast?: boolean;
  /** Filled in with what the states went through (see {@linkcode PowerLossStats}). */
  stats?: PowerLossStats;
}

/** A write or size change not yet synced, with its inode and record (for `_torn.ts`). */
export interface PendingOp {
  inode: Inode;
  seq: number;
  op: Op;
}

/** One way the pending state at an instant can land (for `_torn.ts`). */
export interface Choice {
  keep: (index: number) => boolean;
  order?: number[];
  tear?: (index: number, sectors: number) => (0 | 1 | 2)[] | undefined;
  /** A write cut at a byte: the pending op's index, the cut's file offset, the fill. */
  cut?: { index: number; at: number; fill: "zero" | "garbage" };
  names: (name: string, history: (Inode | null)[]) => Inode | null;
  garbage: () => number;
}
