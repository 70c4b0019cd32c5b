/**
 * Crash states from a recorder log: the file sets a SIGKILL before each recorded call
 * leaves ({@linkcode killStates}), and those a power loss at each sync point may leave
 * under a named persistence model ({@linkcode powerLossStates}).
 *
 * The model (names relative to the watched folder; the baseline is durable):
 *
 * - Data: a completed `fsync`/`fdatasync`/`msync` of a file makes its content durable,
 *   and so does a completed write through a handle opened with `O_DSYNC` or `O_SYNC`, or
 *   a `pwritev2` with `RWF_DSYNC` or `RWF_SYNC` (with the file's pending size changes;
 *   an earlier unsynced write to the same file then is a `ModelError`);
 *   `sync`/`syncfs` make everything durable; `sync_file_range` guarantees nothing. At a
 *   power loss each unsynced write or size change is independently kept or dropped
 *   (`subset`), kept ones may land in any order (`reorder`), and a kept write may be torn
 *   at 512-byte sectors aligned on the file offset, each sector kept, dropped or filled
 *   with garbage (`torn`, as SQLite's test6.c). A sync of a file that failed at the
 *   device (EIO, ENOSPC, EDQUOT) drops the writes pending then: they never land, even
 *   when a later sync succeeds (ext4, XFS and Btrfs mark those pages clean), though a
 *   SIGKILL state still shows them; bytes written again after it land with the next sync.
 * - Names (creates, renames, unlinks, links, mkdir, rmdir) by profile:
 *   - `posix` (strict): a name change is durable only once its folder is fsynced (or
 *     `sync`); until then each changed name shows any value it had since its last
 *     durable one, independently of the others.
 *   - `ext4-ordered`: name changes persist in order (one journal); any fsync, of a file
 *     or a folder, commits every earlier one (so a created file's name survives with its
 *     fsync); until then a prefix of them survives.
 * - SQLite's `-shm` index is never state (SQLite rebuilds it): it is not materialised.
 *
 * The instants: just before every sync call (where most is pending), during every
 * synchronous write (it pending) and at the end of the log; a crash between two syncs
 * leaves a subset of what the next sync point can, with no more acknowledgements. Per
 * instant: the synced-only state, the everything-kept state, every prefix in call order,
 * the torn last writes (enumerated: the last unsynced write of each file cut at every
 * 512-byte sector boundary it spans, 4 KiB ones included, and one byte before its end,
 * the part after the cut zeroed and then garbage, everything else kept), then every
 * combination when there are at most `exhaustive` of them, else `samples` seeded random
 * ones (subsets, reorders, tears).
 *
 * @example
 * ```ts
 * import { powerLossStates } from "./crash_states.ts";
 * import { parseLog } from "./log.ts";
 * const log = parseLog(new Uint8Array(0));
 * const states = [...powerLossStates(log, { profile: "posix" })];
 * console.log(states.length, states[0]?.label); // 1 "end: synced"
 * ```
 *
 * @module
 */
import { seededRandom } from "../harness/seeded_random.ts";
import {
  Bytes,
  type FileSet,
  FsModel,
  type Inode,
  isShm,
  ModelError,
  type NameChange,
  type Profile,
} from "./_fs_model.ts";
import {
  logProblems,
  type LogRecord,
  opensSynchronously,
  type RecorderLog,
  writesSynchronously,
} from "./log.ts";
import { firstDifference, readFolder } from "./image.ts";
import { tornLastWrites } from "./_torn.ts";
import type { Choice, CrashState, PendingOp, PowerLossOptions, TornWrite } from "./_types.ts";

export { type FileSet, ModelError, type Profile } from "./_fs_model.ts";
export { tearCuts } from "./_torn.ts";
export type { CrashState, PowerLossOptions, PowerLossStats, TornWrite } from "./_types.ts";

/** The sector size torn writes are cut at. */
export const SECTOR_SIZE = 512;

/** The profiles, by name. */
export const PROFILES: readonly Profile[] = ["posix", "ext4-ordered"];

/**
 * The states a SIGKILL just before each counted call leaves (the page cache keeps every
 * completed call), then the state after the last call; `k` is the crash point
 * `FSREC_CRASH_AT` that gives each.
 *
 * @param log The log (recorded with data).
 * @param baseline The folder's content before the log began.
 * @returns The states, in log order.
 * @example
 * ```ts
 * import { killStates } from "./crash_states.ts";
 * import { parseLog } from "./log.ts";
 * for (const state of killStates(parseLog(new Uint8Array(0)))) console.log(state.k, state.label);
 * // 1 "end"
 * ```
 */
export function* killStates(
  log: RecorderLog,
  baseline: FileSet = new Map(),
): Generator<CrashState & { k: number }> {
  const model = new FsModel(log.watched, baseline, "posix");
  let k = 0;
  for (const record of log.records) {
    if (record.counted) {
      k++;
      yield {
        k,
        at: record.seq,
        label: `before #${record.seq} (${record.kind})`,
        files: model.currentImage(),
        key: `kill ${record.seq}`,
        acks: model.acks.slice(),
      };
    }
    // A SIGKILL keeps every completed call: what is durable does not matter here.
    model.apply(record, false);
  }
  yield {
    k: k + 1,
    at: -1,
    label: "end",
    files: model.currentImage(),
    key: "kill end",
    acks: model.acks.slice(),
  };
}

/**
 * The state a SIGKILL after the last recorded call leaves (the last of
 * {@linkcode killStates}, without copying the files at every call before it).
 *
 * @param log The log (recorded with data).
 * @param baseline The folder's content before the log began.
 * @returns The state.
 * @example
 * ```ts
 * import { killEnd } from "./crash_states.ts";
 * import { parseLog } from "./log.ts";
 * console.log(killEnd(parseLog(new Uint8Array(0))).label); // "end"
 * ```
 */
export function killEnd(
  log: RecorderLog,
  baseline: FileSet = new Map(),
): CrashState & { k: number } {
  const model = new FsModel(log.watched, baseline, "posix");
  for (const record of log.records) model.apply(record, false);
  return {
    k: log.records.filter((record) => record.counted).length + 1,
    at: -1,
    label: "end",
    files: model.currentImage(),
    key: "kill end",
    acks: model.acks.slice(),
  };
}

/** The key of a state: what was durable, which pending ops landed in which order, names. */
function stateKey(model: FsModel, pending: PendingOp[], choice: Choice, extra: string): string {
  const indices = choice.order ?? pending.map((_, i) => i);
  const kept = indices.filter((i) => choice.keep(i)).map((i) => pending[i]!.seq).join(",");
  const names: string[] = [];
  const histories = nameHistories(model);
  for (const [name, history] of histories) {
    if (history.length === 1) continue;
    names.push(`${name}=${choice.names(name, history)?.id ?? 0}`);
  }
  return `${model.durableVersion}|${kept}|${names.join(",")}|${extra}`;
}

function nameHistories(model: FsModel): Map<string, (Inode | null)[]> {
  const histories = new Map<string, (Inode | null)[]>();
  for (const [name, inode] of model.durableNames) histories.set(name, [inode]);
  for (const change of model.changes) {
    const history = histories.get(change.name) ?? [model.durableNames.get(change.name) ?? null];
    history.push(change.to);
    histories.set(change.name, history);
  }
  return histories;
}

function materialise(model: FsModel, pending: PendingOp[], choice: Choice): FileSet {
  const contents = new Map<Inode, Bytes>();
  const indices = choice.order ?? pending.map((_, i) => i);
  for (const index of indices) {
    if (!choice.keep(index)) continue;
    const { inode, op } = pending[index]!;
    let bytes = contents.get(inode);
    // Room for the content now: most states grow a file (a WAL, a journal) to about it.
    if (!bytes) contents.set(inode, bytes = inode.durable.clone(inode.current.length));
    if (choice.cut?.index === index && "data" in op) {
      // Torn at a byte: the write's own bytes before the cut, zeros or garbage after it.
      const part = op.data.slice();
      const from = choice.cut.at - op.offset;
      for (let i = from; i < part.length; i++) {
        part[i] = choice.cut.fill === "zero" ? 0 : choice.garbage();
      }
      bytes.apply({ offset: op.offset, data: part });
      continue;
    }
    const sectors = "data" in op
      ? Math.ceil((op.offset + op.data.length) / SECTOR_SIZE) - Math.floor(op.offset / SECTOR_SIZE)
      : 0;
    const tear = "data" in op ? choice.tear?.(index, sectors) : undefined;
    if (!tear || !("data" in op)) {
      bytes.apply(op);
      continue;
    }
    const first = Math.floor(op.offset / SECTOR_SIZE);
    for (let s = 0; s < sectors; s++) {
      const start = Math.max(op.offset, (first + s) * SECTOR_SIZE);
      const end = Math.min(op.offset + op.data.length, (first + s + 1) * SECTOR_SIZE);
      if (tear[s] === 0) continue;
      const part = op.data.slice(start - op.offset, end - op.offset);
      if (tear[s] === 2) { for (let i = 0; i < part.length; i++) part[i] = choice.garbage(); }
      bytes.apply({ offset: start, data: part });
    }
  }
  // Names: each changed name's history since its durable value, oldest first.
  const histories = nameHistories(model);
  const chosen = new Map<string, Inode>();
  for (const [name, history] of histories) {
    const inode = history.length === 1 ? history[0]! : choice.names(name, history);
    if (inode) chosen.set(name, inode);
  }
  const files: FileSet = new Map();
  for (const [name, inode] of chosen) {
    if (inode.dir || isShm(name) || name === "") continue;
    // A name in a folder that did not survive is gone with it.
    let folder = name;
    let orphan = false;
    while (folder.includes("/")) {
      folder = folder.slice(0, folder.lastIndexOf("/"));
      if (!chosen.get(folder)?.dir) orphan = true;
    }
    if (orphan) continue;
    // No copy: the state's own content is fresh, and a durable one is never written again
    // (a sync replaces it); a state's files are read, never written.
    files.set(name, (contents.get(inode) ?? inode.durable).view());
  }
  return files;
}

/** Name choices of one instant: how many, and the choice for a number below that. */
function nameChoices(
  model: FsModel,
  profile: Profile,
): { count: number; pick: (n: number) => Choice["names"]; all: Choice["names"] } {
  const all: Choice["names"] = (_, history) => history[history.length - 1]!;
  if (model.changes.length === 0) return { count: 1, pick: () => all, all };
  if (profile === "ext4-ordered") {
    // A prefix of the changes: the value a name had after the first `cut` changes.
    const changes: NameChange[] = model.changes;
    return {
      count: changes.length + 1,
      pick: (cut) => (name) => {
        let value: Inode | null = model.durableNames.get(name) ?? null;
        for (let i = 0; i < cut; i++) if (changes[i]!.name === name) value = changes[i]!.to;
        return value;
      },
      all,
    };
  }
  // posix: each changed name independently shows any value of its history.
  const changed = [...new Set(model.changes.map((change) => change.name))];
  const sizes = changed.map((name) => 1 + model.changes.filter((c) => c.name === name).length);
  const count = sizes.reduce((a, b) => a * b, 1);
  return {
    count,
    pick: (n) => {
      const picks = new Map<string, number>();
      let rest = n;
      changed.forEach((name, i) => {
        picks.set(name, rest % sizes[i]!);
        rest = Math.floor(rest / sizes[i]!);
      });
      return (name, history) => history[picks.get(name) ?? history.length - 1] ?? null;
    },
    all,
  };
}

/**
 * Whether replaying `log` from `baseline` gives the files now in `dir` (the folder it
 * watched, after the run ended): a difference means the recorder missed calls (a store
 * that writes around libc's wrappers, such as a Go program or a static binary, or
 * through `io_uring`), and no state drawn from the log can be judged.
 *
 * @param log The run's log.
 * @param at The folder's content before the run, and the folder.
 * @returns `null` when they match, else a sentence naming the first difference.
 * @example
 * ```ts
 * import { replayMismatch } from "./crash_states.ts";
 * import { parseLog } from "./log.ts";
 * const dir = Deno.makeTempDirSync();
 * console.log(replayMismatch(parseLog(new Uint8Array(0)), { baseline: new Map(), dir })); // null
 * ```
 */
export function replayMismatch(
  log: RecorderLog,
  at: { baseline: FileSet; dir: string },
): string | null {
  const missed =
    "the recorder missed calls: a store that writes around libc's wrappers, such as a Go program, a static binary or io_uring, cannot be recorded";
  let replayed: FileSet;
  try {
    replayed = killEnd(log, at.baseline).files;
  } catch (error) {
    if (!(error instanceof ModelError)) throw error;
    return `the log does not replay: ${error.message} (${missed})`;
  }
  const difference = firstDifference(replayed, readFolder(at.dir));
  if (difference === null) return null;
  return `the replayed log (${log.records.length} records) differs from the files on disk: ${difference} (${missed})`;
}

/**
 * Why a finished run cannot be judged from its log, or `null` when it can: a call the
 * model cannot follow (`logProblems`), or a replay that differs from the files the run
 * left ({@linkcode replayMismatch}).
 *
 * @param log The run's log.
 * @param at The folder's content before the run, and the folder.
 * @returns The reason, or `null`.
 * @example
 * ```ts
 * import { unfollowedRun } from "./crash_states.ts";
 * import { parseLog } from "./log.ts";
 * const dir = Deno.makeTempDirSync();
 * console.log(unfollowedRun(parseLog(new Uint8Array(0)), { baseline: new Map(), dir })); // null
 * ```
 */
export function unfollowedRun(
  log: RecorderLog,
  at: { baseline: FileSet; dir: string },
): string | null {
  const problems = logProblems(log);
  return problems.length ? problems.join("; ") : replayMismatch(log, at);
}

/**
 * The states a power loss at each sync point (and at the end of the log) may leave.
 *
 * @param log The log (recorded with data: `FSREC_DATA=1`).
 * @param options The profile and how many states to draw.
 * @returns The states, in log order.
 * @throws {ModelError} When the log does not fit the model.
 * @example
 * ```ts
 * import { powerLossStates } from "./crash_states.ts";
 * import { parseLog } from "./log.ts";
 * const log = parseLog(new Uint8Array(0));
 * for (const state of powerLossStates(log, { profile: "ext4-ordered" })) {
 *   console.log(state.label, state.files.size); // end: synced 0
 * }
 * ```
 */
export function* powerLossStates(
  log: RecorderLog,
  options: PowerLossOptions,
): Generator<CrashState> {
  const model = new FsModel(log.watched, options.baseline ?? new Map(), options.profile);
  const seed = options.seed ?? 1;
  const isInstant = (record: LogRecord) =>
    record.counted && (record.kind === "sync" || record.kind === "syncAll");
  // A synchronous write (an O_DSYNC or O_SYNC handle, RWF_DSYNC) is its own sync point: a
  // power loss while it runs finds it pending; once it returns, it is durable.
  const synchronous = new Set<number>();
  let points = 0;
  for (const record of log.records) {
    if (opensSynchronously(record)) synchronous.add(record.handle);
    if (isInstant(record) || writesSynchronously(record, synchronous)) points++;
  }
  const first = points + 1 - (options.lastInstants ?? Infinity);
  let instant = 0;
  const stats = options.stats;
  const at = function* (seq: number, what: string): Generator<CrashState> {
    instant++;
    if (instant <= first) return;
    if (stats) stats.instants++;
    yield* statesAt(model, options, seed + instant * 7919, seq, what);
  };
  for (const record of log.records) {
    if (isInstant(record)) {
      yield* at(record.seq, `before #${record.seq} (${record.kind})`);
    }
    if (!model.syncsOnWrite(record)) {
      model.apply(record);
      continue;
    }
    model.apply(record, false);
    yield* at(record.seq, `in #${record.seq} (synchronous write)`);
    model.settleWrite(record);
  }
  yield* at(-1, "end");
}

function* statesAt(
  model: FsModel,
  options: PowerLossOptions,
  seed: number,
  seq: number,
  what: string,
): Generator<CrashState> {
  const pending: PendingOp[] = [];
  for (const inode of model.reachable()) {
    for (const { seq, op } of inode.pending) pending.push({ inode, seq, op });
  }
  pending.sort((a, b) => a.seq - b.seq);
  const names = nameChoices(model, options.profile);
  const acks = model.acks.slice();
  const lazy = (label: string, choice: Choice, extra: string, torn?: TornWrite): CrashState => {
    let files: FileSet | undefined;
    return {
      at: seq,
      label: `${what}: ${label}`,
      get files(): FileSet {
        return files ??= materialise(model, pending, choice);
      },
      key: stateKey(model, pending, choice, extra),
      acks,
      ...(torn ? { torn } : {}),
    };
  };
  const state = (label: string, choice: Omit<Choice, "garbage">): CrashState =>
    lazy(label, { garbage: () => 0, ...choice }, "");
  const durable: Choice["names"] = (_, history) => history[0]!;
  yield state("synced", { keep: () => false, names: durable });
  if (pending.length === 0 && names.count === 1) return;
  yield state("all", { keep: () => true, names: names.all });
  // Prefixes in call order, names included: what an in-order device leaves.
  const changeSeqs = model.changes.map((change) => change.seq);
  for (let j = 1; j < pending.length; j++) {
    const cutSeq = pending[j]!.seq;
    const prefixNames: Choice["names"] = (name, history) => {
      let value = history[0]!;
      let h = 1;
      model.changes.forEach((change, i) => {
        if (change.name !== name) return;
        if (changeSeqs[i]! < cutSeq) value = history[h]!;
        h++;
      });
      return value;
    };
    yield state(`prefix ${j}`, { keep: (i) => i < j, names: prefixNames });
  }
  if (options.tornLast ?? true) {
    yield* tornLastWrites(model, { pending, names: names.all, lazy }, options);
  }
  const total = 2 ** Math.min(pending.length, 40) * names.count;
  if (total <= (options.exhaustive ?? 64)) {
    for (let n = 0; n < names.count; n++) {
      for (let mask = 0; mask < 2 ** pending.length; mask++) {
        yield state(`subset ${mask.toString(2)} names ${n}`, {
          keep: (i) => ((mask >> i) & 1) === 1,
          names: names.pick(n),
        });
      }
    }
    return;
  }
  yield* sampledStates(pending, names, seed, lazy, options);
}

/** `samples` seeded random states of one instant: subsets, reorders, every other one torn. */
function* sampledStates(
  pending: PendingOp[],
  names: ReturnType<typeof nameChoices>,
  seed: number,
  lazy: (label: string, choice: Choice, extra: string) => CrashState,
  options: PowerLossOptions,
): Generator<CrashState> {
  for (let s = 0; s < (options.samples ?? 12); s++) {
    const random = seededRandom(seed + s);
    const keep = pending.map(() => random() < 0.5);
    let order: number[] | undefined;
    if (options.reorder ?? true) {
      order = pending.map((_, i) => i);
      for (let i = order.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
    }
    const tornOn = (options.torn ?? true) && s % 2 === 1;
    const tears = new Map<number, (0 | 1 | 2)[]>();
    const pick = Math.floor(random() * names.count);
    const choice: Choice = {
      keep: (i) => keep[i]!,
      names: names.pick(pick),
      garbage: () => Math.floor(random() * 256),
      tear: (index, sectors) => {
        if (!tornOn || random() >= 0.5) return undefined;
        let tear = tears.get(index);
        if (!tear) {
          tear = Array.from({ length: sectors }, () => Math.floor(random() * 3) as 0 | 1 | 2);
          tears.set(index, tear);
        }
        return tear;
      },
    };
    if (order) choice.order = order;
    // A torn state's garbage depends on its seed: never the same files as another's.
    const state = lazy(
      `sample ${seed + s}${tornOn ? " torn" : ""}`,
      choice,
      tornOn ? `torn ${seed + s}` : "",
    );
    // Its files are made now: the tears draw from the same generator as the choices.
    void state.files;
    yield state;
  }
}
