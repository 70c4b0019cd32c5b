/**
 * Crash states on disk: a folder's files read as a {@linkcode FileSet} (a baseline), and
 * a file set written into a scratch folder an oracle can open (reused from state to
 * state: only what differs is rewritten).
 *
 * @example
 * ```ts
 * import { readFolder, writeImage } from "./image.ts";
 * const dir = Deno.makeTempDirSync();
 * writeImage(new Map([["s.db", new Uint8Array([1])]]), dir);
 * console.log(readFolder(dir).get("s.db")); // Uint8Array [1]
 * ```
 *
 * @module
 */
import type { FileSet } from "./_fs_model.ts";
import { filesIn } from "../internal/fs.ts";

export type { FileSet } from "./_fs_model.ts";

/**
 * Reads every file under a folder (recursively), names relative to it. SQLite's `-shm`
 * index is left out: it is not durable state.
 *
 * @param dir The folder.
 * @returns The files.
 * @example
 * ```ts
 * import { readFolder } from "./image.ts";
 * console.log(readFolder(Deno.makeTempDirSync()).size); // 0
 * ```
 */
export function readFolder(dir: string): FileSet {
  const names = filesIn(dir).filter((name) => !name.endsWith("-shm"));
  return new Map(names.map((name) => [name, Deno.readFileSync(`${dir}/${name}`)]));
}

/**
 * Makes `dir` hold exactly `files` (removing what else is there). The scratch folder is
 * the oracle's: opening a state may change it, so every call rewrites every file.
 *
 * @param files The state.
 * @param dir The scratch folder (created when missing).
 * @example
 * ```ts
 * import { writeImage } from "./image.ts";
 * const dir = Deno.makeTempDirSync();
 * writeImage(new Map([["a", new Uint8Array(3)]]), dir);
 * writeImage(new Map(), dir); // "a" is gone
 * console.log([...Deno.readDirSync(dir)].length); // 0
 * ```
 */
export function writeImage(files: FileSet, dir: string): void {
  Deno.mkdirSync(dir, { recursive: true });
  for (const entry of Deno.readDirSync(dir)) {
    if (!files.has(entry.name)) Deno.removeSync(`${dir}/${entry.name}`, { recursive: true });
  }
  for (const [name, content] of files) {
    const slash = name.lastIndexOf("/");
    if (slash > 0) Deno.mkdirSync(`${dir}/${name.slice(0, slash)}`, { recursive: true });
    // Overwrite, then cut: a truncation to zero first would make ext4 flush the file on
    // close (its replace-by-truncate heuristic), which costs a disk write per state.
    const file = Deno.openSync(`${dir}/${name}`, { write: true, create: true });
    try {
      let at = 0;
      while (at < content.length) at += file.writeSync(content.subarray(at));
      file.truncateSync(content.length);
    } finally {
      file.close();
    }
  }
}

/**
 * A digest of a file set (names and contents), to recognise a state already checked.
 *
 * @param files The state.
 * @returns A hex SHA-256.
 * @example
 * ```ts
 * import { imageDigest } from "./image.ts";
 * const a = await imageDigest(new Map([["s.db", new Uint8Array([1])]]));
 * const b = await imageDigest(new Map([["s.db", new Uint8Array([2])]]));
 * console.log(a !== b); // true
 * ```
 */
export async function imageDigest(files: FileSet): Promise<string> {
  const names = [...files.keys()].sort();
  const encoder = new TextEncoder();
  let size = 0;
  const parts: Uint8Array[] = [];
  for (const name of names) {
    const content = files.get(name)!;
    const head = encoder.encode(`${name}\0${content.length}\0`);
    parts.push(head, content);
    size += head.length + content.length;
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The first difference between two file sets (a replay and the disk), named for a reader,
 * or `null` when they hold the same files with the same bytes.
 *
 * @param replay The files a replay of the log gives.
 * @param disk The files on disk.
 * @returns `"<name>: replay N bytes, disk M bytes"`, `"<name>: in the replay only"`, … or `null`.
 * @example
 * ```ts
 * import { firstDifference } from "./image.ts";
 * const a = new Map([["s.db", new Uint8Array([1, 2])]]);
 * console.log(firstDifference(a, new Map([["s.db", new Uint8Array([1, 3])]])));
 * // "s.db: first difference at byte 1"
 * ```
 */
export function firstDifference(replay: FileSet, disk: FileSet): string | null {
  for (const name of [...new Set([...replay.keys(), ...disk.keys()])].sort()) {
    const a = replay.get(name);
    const b = disk.get(name);
    if (!a || !b) return `${name}: ${a ? "in the replay only" : "on disk only"}`;
    if (a.length !== b.length) return `${name}: replay ${a.length} bytes, disk ${b.length} bytes`;
    const at = a.findIndex((byte, i) => byte !== b[i]);
    if (at !== -1) return `${name}: first difference at byte ${at}`;
  }
  return null;
}
