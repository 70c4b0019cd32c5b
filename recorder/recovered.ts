/**
 * Checks crash states in-process, fast: each state's files are written into one scratch
 * folder, every SQLite database in it is recovered once by SQLite itself (a connection of
 * this project's binding with `synchronous = OFF`: a hot journal rolled back, the WAL
 * checkpointed into the file), and the recovered files are digested. The judge (the
 * clause's, through the target's own store) runs only on a recovered content not seen
 * before; a state whose recovered files equal an earlier one's reuses that verdict.
 *
 * Why this is sound: what any SQLite connection reads from a state is what SQLite's
 * recovery makes of it, and the recovery is deterministic given the files; so two states
 * with byte-identical recovered files read the same through any store on SQLite. A
 * state SQLite cannot recover is judged on its own (never reused). Before any recovery, a
 * state is compared with the last distinct images recovered: its files with each WAL cut
 * after the last frame SQLite's recovery keeps (a power loss mostly differs in torn or
 * unsynced frames after it, which recovery never reads), each rollback journal left out
 * and its database as the journal's playback leaves it (a power loss mostly differs in
 * pages of the database the journal restores). Each recovery checks the cut against the
 * frames SQLite kept and the played-back file against SQLite's; one disagreement and
 * states are compared whole. Files that are not SQLite databases are digested as they
 * are. States are opened one after another, never two connections at once, so the
 * binding's connection and the target's (maybe another copy of SQLite, e.g. `node:sqlite`)
 * never hold the same file together.
 *
 * @example
 * ```ts
 * import { RecoveredStates } from "./recovered.ts";
 * const states = new RecoveredStates(Deno.makeTempDirSync());
 * const files = new Map([["a.txt", new TextEncoder().encode("hi")]]);
 * const verdict = await states.check({ files, key: "s1" }, "", (dir) => Deno.readTextFileSync(`${dir}/a.txt`));
 * console.log(verdict, states.judged); // hi 1
 * ```
 *
 * @module
 */
import { Database } from "../session_db/sqlite/database.ts";
import { type FileSet, readFolder, writeImage } from "./image.ts";
import { memoryFolder } from "./_memory_folder.ts";
import { judging } from "../internal/judging_beacon.ts";
import { walKept } from "./_wal_prefix.ts";
import { rolledBack } from "./_journal_playback.ts";
import { hasDatabaseHeader } from "../internal/sqlite_files.ts";
import { Buffer } from "node:buffer";

/** Whether a database file's header says WAL (its read or write version is 2). */
function walHeader(content: Uint8Array): boolean {
  return content[18] === 2 || content[19] === 2;
}

/**
 * Recovers every SQLite database of a folder in place (rollback, WAL checkpoint) with
 * syncs off: the folder then holds what any connection would read.
 *
 * @param dir The folder (the state's scratch copy).
 * @param files The state's files (which of them are SQLite databases).
 * @param walFrames When given, gets the frames SQLite's recovery kept of each database's
 * WAL (by the database's name), for the databases that have one.
 * @returns The recovery errors, one per database SQLite could not recover (`[]` when all did).
 * @example
 * ```ts
 * import { recoverSqliteFiles } from "./recovered.ts";
 * console.log(recoverSqliteFiles(Deno.makeTempDirSync(), new Map())); // []
 * ```
 */
export function recoverSqliteFiles(
  dir: string,
  files: FileSet,
  walFrames?: Map<string, number>,
): string[] {
  const errors: string[] = [];
  for (const [name, content] of files) {
    if (!hasDatabaseHeader(content)) continue;
    let db: Database | undefined;
    const journal = `${dir}/${name}-journal`;
    const journaled = files.has(`${name}-journal`);
    try {
      if (journaled) {
        // PRAGMA synchronous reads the schema, which would roll a hot journal back with
        // syncs on: set it while the journal is held aside, then put the journal back so
        // the next read rolls it back with syncs off (one disk flush less per state). Not
        // when the file's header says WAL (a switch to WAL that the journal undoes): that
        // read would open the WAL, and a connection in WAL mode never plays a journal back.
        if (!walHeader(content)) {
          Deno.renameSync(journal, `${journal}.held`);
          try {
            db = new Database(`${dir}/${name}`, { create: false });
            db.exec("PRAGMA synchronous = OFF");
          } catch {
            // The file alone does not open (mid-transaction): recover with syncs on.
            db?.close();
            db = undefined;
          } finally {
            Deno.renameSync(`${journal}.held`, journal);
          }
        }
        db ??= new Database(`${dir}/${name}`, { create: false });
        db.exec("SELECT count(*) FROM sqlite_master; PRAGMA wal_checkpoint(TRUNCATE)");
      } else {
        // No rollback journal: the exclusive locking mode, set before the first read,
        // keeps a WAL's index in memory (no -shm file made, mapped and removed per state);
        // SQLite's WAL recovery is the same either way.
        db = new Database(`${dir}/${name}`, { create: false });
        db.exec(
          "PRAGMA locking_mode = EXCLUSIVE; PRAGMA synchronous = OFF; " +
            "SELECT count(*) FROM sqlite_master",
        );
        if (walFrames && files.has(`${name}-wal`)) {
          // A passive checkpoint reports the frames recovery kept (a truncating one, 0).
          walFrames.set(name, Number(db.prepare("PRAGMA wal_checkpoint").value()?.[1] ?? -1));
        }
        db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      }
      db.close();
      db = undefined;
      // What is left of a journal or WAL after a clean read and close is cold: no reader
      // looks at it, so it is not part of the recovered content. (Listed, not removed
      // blindly: a failed removal's error costs more than the listing.)
      for (const entry of Deno.readDirSync(dir)) {
        if (entry.name === `${name}-journal` || entry.name === `${name}-wal`) {
          Deno.removeSync(`${dir}/${entry.name}`);
        }
      }
    } catch (error) {
      errors.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      db?.close();
    }
  }
  return errors;
}

/** How many distinct images {@linkcode RecoveredStates} remembers (the states of one instant). */
const RECENT_IMAGES = 64;

/** A state's files as recovery reads them. */
interface Image {
  files: FileSet;
  /** The frames kept of each cut WAL, by its database's name. */
  cuts: Map<string, number>;
  /**
   * The databases whose rollback journal was left out, each with the file SQLite's
   * recovery leaves: the same file beside a journal that is not hot, else its playback.
   */
  playedBack: Map<string, Uint8Array>;
}

/** What {@linkcode imageOf} may leave out: each is turned off when SQLite disagrees. */
interface ImageRules {
  cutWals: boolean;
  playJournals: boolean;
}

/**
 * A rollback journal SQLite never plays back: empty, or its first byte 0 (`hasHotJournal`
 * reads that byte alone). Such a journal is how one with syncs on looks until its records
 * are synced (its header is written zeroed, the magic only after the sync).
 */
function isColdJournal(content: Uint8Array): boolean {
  return content.length === 0 || content[0] === 0;
}

/**
 * The database file SQLite's recovery leaves beside a rollback journal: the same file
 * when the journal is not hot, else the file the journal's playback makes; `undefined`
 * when the playback is not modelled, or leaves a file whose header says WAL.
 */
function afterJournal(db: Uint8Array, journal: Uint8Array): Uint8Array | undefined {
  if (isColdJournal(journal)) return db;
  const played = rolledBack(db, journal);
  return played && !walHeader(played) ? played : undefined;
}

/**
 * The image of a state: each SQLite database's WAL (with no rollback journal beside it)
 * cut after the last frame recovery keeps; a rollback journal (beside a database with no
 * WAL) left out, the database as its recovery leaves it; every other file whole.
 */
function imageOf(files: FileSet, rules: ImageRules): Image {
  const cuts = new Map<string, number>();
  const playedBack = new Map<string, Uint8Array>();
  let imageFiles: FileSet | undefined;
  for (const [name, content] of files) {
    const journal = name.endsWith("-journal");
    if (!journal && !name.endsWith("-wal")) continue;
    const database = name.slice(0, -(journal ? "-journal" : "-wal").length);
    const db = files.get(database);
    if (!db || !hasDatabaseHeader(db)) continue;
    if (journal) {
      if (!rules.playJournals || files.has(`${database}-wal`)) continue;
      const played = afterJournal(db, content);
      if (!played) continue;
      playedBack.set(database, played);
      imageFiles ??= new Map(files);
      imageFiles.delete(name);
      imageFiles.set(database, played);
      continue;
    }
    if (!rules.cutWals || files.has(`${database}-journal`)) continue;
    const kept = walKept(content);
    if (!kept) continue;
    cuts.set(database, kept.frames);
    if (kept.end < content.length) {
      imageFiles ??= new Map(files);
      imageFiles.set(name, content.subarray(0, kept.end));
    }
  }
  return { files: imageFiles ?? files, cuts, playedBack };
}

function sameFiles(x: FileSet, y: FileSet): boolean {
  if (x.size !== y.size) return false;
  for (const [name, a] of x) {
    const b = y.get(name);
    if (!b || a.length !== b.length) return false;
    // Native: most states of an instant equal a recent image, so each is compared whole.
    if (a !== b && Buffer.compare(a, b) !== 0) return false;
  }
  return true;
}

/**
 * A cheap filter before {@linkcode sameFiles}: each file's name, length, last word and
 * every 16th word. File sets with equal filters are still compared whole.
 */
function sampledDigest(files: FileSet): string {
  let a = 0x811c9dc5;
  for (const name of [...files.keys()].sort()) {
    for (let i = 0; i < name.length; i++) a = Math.imul(a ^ name.charCodeAt(i), 0x01000193);
    const content = files.get(name)!;
    a = Math.imul(a ^ content.length, 0x01000193);
    const view = new DataView(content.buffer, content.byteOffset, content.byteLength);
    for (let at = 0; at + 4 <= content.length; at += 64) {
      a = Math.imul(a ^ view.getInt32(at, true), 0x01000193);
    }
    if (content.length >= 4) {
      a = Math.imul(a ^ view.getInt32(content.length - 4, true), 0x01000193);
    }
  }
  return (a >>> 0).toString(16);
}

/**
 * A crash state as {@linkcode RecoveredStates} takes it: its files and a key naming them.
 *
 * @example
 * ```ts
 * import type { StateFiles } from "./recovered.ts";
 * const state: StateFiles = { files: new Map(), key: "empty" };
 * ```
 */
export interface StateFiles {
  /** The files. */
  readonly files: FileSet;
  /** Two states with one key hold the same files. */
  key: string;
  /** How the state was made, for a failure's words. */
  label?: string;
}

/**
 * Judges crash states in one scratch folder, reusing verdicts across states whose files
 * (by key) or whose SQLite-recovered files (by digest) are the same. Each state is
 * recovered in a folder on a memory file system where the machine has one (/dev/shm),
 * else in the scratch folder; the judge always runs in the scratch folder, on the
 * recovered files (the state's own when SQLite could not recover it). Call
 * {@linkcode RecoveredStates.close} when done: it removes the memory folder.
 *
 * @example
 * ```ts
 * import { RecoveredStates } from "./recovered.ts";
 * const states = new RecoveredStates(Deno.makeTempDirSync());
 * const a = { files: new Map([["x", new Uint8Array([1])]]), key: "a" };
 * const b = { files: new Map([["x", new Uint8Array([1])]]), key: "b" };
 * for (const state of [a, b]) await states.check(state, "", () => "ok");
 * states.close();
 * console.log(states.checked, states.judged); // 2 1
 * ```
 */
export class RecoveredStates<V> {
  #scratch: string;
  #work: string | undefined;
  #byKey = new Map<string, V>();
  #byDigest = new Map<string, { files: FileSet; verdict: V }[]>();
  #recent: { digest: string; files: FileSet; verdict: V }[] = [];
  #rules: ImageRules = { cutWals: true, playJournals: true };
  #checked = 0;
  #recovered = 0;
  #judged = 0;

  /** Judges states in `scratch` (created when missing).
   *
   * @param scratch The folder the judge runs in.
   */
  constructor(scratch: string) {
    this.#scratch = scratch;
  }

  /**
   * Removes the memory folder the states were recovered in, if any (the scratch folder is
   * the caller's). Checking more states afterwards makes a new one.
   */
  close(): void {
    if (this.#work === undefined || this.#work === this.#scratch) return;
    try {
      Deno.removeSync(this.#work, { recursive: true });
    } catch {
      // Already gone: a folder of a process that is gone is removed by the next one.
    }
    this.#work = undefined;
  }

  /** The scratch folder. */
  get scratch(): string {
    return this.#scratch;
  }

  /** States checked. */
  get checked(): number {
    return this.#checked;
  }

  /** States written out and recovered by SQLite (distinct images: no earlier state's key). */
  get recovered(): number {
    return this.#recovered;
  }

  /** States the judge ran on (distinct recovered contents). */
  get judged(): number {
    return this.#judged;
  }

  /** Gives up the memory folder for good: the scratch folder takes over. */
  #onDisk(): void {
    this.close();
    this.#work = this.#scratch;
  }

  /** Where `files` were written: the memory folder, or the scratch folder once that fails. */
  #written(files: FileSet): string {
    const work = this.#work ??= memoryFolder() ?? this.#scratch;
    try {
      writeImage(files, work);
      return work;
    } catch (error) {
      if (work === this.#scratch) throw error;
      // A small /dev/shm (a container's 64 MB) may fill: the disk takes over for good.
      this.#onDisk();
      writeImage(files, this.#scratch);
      return this.#scratch;
    }
  }

  /**
   * The verdict on one state: reused when its files, or its recovered files, were judged
   * before with the same `context`; else `judge` runs on the recovered scratch folder.
   *
   * @param state The state's files and key.
   * @param context What else the verdict depends on (e.g. the acknowledgements), as a key.
   * @param judge Judges the folder (may change it).
   * @returns The verdict.
   */
  async check(
    state: StateFiles,
    context: string,
    judge: (dir: string) => V | Promise<V>,
  ): Promise<V> {
    this.#checked++;
    const key = `${state.key}\0${context}`;
    const byKey = this.#byKey.get(key);
    if (byKey !== undefined) return byKey;
    const image = imageOf(state.files, this.#rules);
    const imageDigest = `${sampledDigest(image.files)}\0${context}`;
    const recent = this.#recall(imageDigest, image.files);
    if (recent !== undefined) {
      this.#byKey.set(key, recent);
      return recent;
    }
    this.#recovered++;
    let work = this.#written(state.files);
    // The frames SQLite keeps are asked for only to check a cut.
    const frames = image.cuts.size ? new Map<string, number>() : undefined;
    let errors = recoverSqliteFiles(work, state.files, frames);
    if (work !== this.#scratch && errors.some((e) => e.includes("disk is full"))) {
      // SQLITE_FULL in memory says nothing of the state: the disk recovers it instead.
      this.#onDisk();
      work = this.#written(state.files);
      frames?.clear();
      errors = recoverSqliteFiles(work, state.files, frames);
    }
    // A state SQLite cannot recover is never merged with another.
    const recovered = errors.length ? undefined : readFolder(work);
    this.#checkRules(image, { frames, recovered });
    const digest = recovered ? `${sampledDigest(recovered)}\0${context}` : "";
    const seen = recovered ? this.#byDigest.get(digest) ?? [] : [];
    let verdict = seen.find((entry) => sameFiles(entry.files, recovered!))?.verdict;
    if (verdict === undefined) {
      if (work !== this.#scratch) writeImage(recovered ?? state.files, this.#scratch);
      else if (errors.length) writeImage(state.files, this.#scratch);
      this.#judged++;
      const scratch = this.#scratch;
      verdict = await judging(state.label ?? `the state ${state.key}`, () => judge(scratch));
      if (recovered) this.#byDigest.set(digest, [...seen, { files: recovered, verdict }]);
    }
    // A state SQLite cannot recover is never merged with another.
    if (recovered && this.#agreed(image)) {
      this.#recent.push({ digest: imageDigest, files: image.files, verdict });
      if (this.#recent.length > RECENT_IMAGES) this.#recent.shift();
    }
    this.#byKey.set(key, verdict);
    return verdict;
  }

  /**
   * Holds SQLite's recovery of one state to what its image left out: each cut WAL to the
   * frames SQLite kept, each left-out journal to the database file SQLite's playback made.
   * A disagreement turns that rule off for the rest of the run and forgets the recent
   * images.
   */
  #checkRules(image: Image, recovery: {
    frames: Map<string, number> | undefined;
    recovered: FileSet | undefined;
  }): void {
    const { frames, recovered } = recovery;
    if ([...image.cuts].some(([db, kept]) => frames?.has(db) && frames.get(db) !== kept)) {
      this.#rules.cutWals = false;
      this.#recent = [];
    }
    const agrees = ([db, played]: [string, Uint8Array]) => {
      const after = recovered?.get(db);
      return after !== undefined && after.length === played.length &&
        Buffer.compare(after, played) === 0;
    };
    if (recovered && ![...image.playedBack].every(agrees)) {
      this.#rules.playJournals = false;
      this.#recent = [];
    }
  }

  /** Whether the rules that made `image` still hold (an image made whole always does). */
  #agreed(image: Image): boolean {
    return (this.#rules.cutWals || !image.cuts.size) &&
      (this.#rules.playJournals || !image.playedBack.size);
  }

  /** The verdict of a recent image equal to `files`, moved to the most recent place. */
  #recall(digest: string, files: FileSet): V | undefined {
    const at = this.#recent.findLastIndex((e) => e.digest === digest && sameFiles(e.files, files));
    if (at < 0) return undefined;
    const [entry] = this.#recent.splice(at, 1);
    this.#recent.push(entry!);
    return entry!.verdict;
  }
}
