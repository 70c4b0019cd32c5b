// What a store keeps on disk, for cell 5's later boots: every entry of the folder the
// database lives in (the cell gives each store a folder of its own, so every file there is
// the store's), by name, size and content digest, with exactly the tolerance SQLite needs on
// an idle open and close: the database's `-shm` (shared memory, not state) and an empty
// `-wal` or `-journal` (SQLite creates and removes them as it opens) aside.
import { createHash } from "node:crypto";
import { basename, dirname, join } from "node:path";

/** One entry of a store's folder. */
export type FolderEntry =
  | { kind: "file"; bytes: Uint8Array; digest: string }
  | { kind: "dir" }
  | { kind: "link"; target: string };

/** A store's folder: each entry by its path relative to the folder. */
export type FolderSnapshot = Map<string, FolderEntry>;

/**
 * A file's entry: its bytes and the first 16 hex digits of their SHA-256.
 *
 * @example
 * ```ts
 * import { fileEntry } from "./store_folder.ts";
 * console.log(fileEntry(new Uint8Array()).digest); // "e3b0c44298fc1c14"
 * ```
 */
export function fileEntry(bytes: Uint8Array): Extract<FolderEntry, { kind: "file" }> {
  return {
    kind: "file",
    bytes,
    digest: createHash("sha256").update(bytes).digest("hex").slice(0, 16),
  };
}

/** Whether SQLite may change this entry on an idle open and close of `base`. */
function idleNoise(name: string, base: string, bytes: Uint8Array): boolean {
  if (name === `${base}-shm`) return true;
  return bytes.length === 0 && (name === `${base}-wal` || name === `${base}-journal`);
}

function walk(folder: string, prefix: string, base: string, out: FolderSnapshot): void {
  // In name order, so that what changed is said the same way every run.
  const entries = [...Deno.readDirSync(join(folder, prefix))]
    .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const entry of entries) {
    const name = prefix ? `${prefix}/${entry.name}` : entry.name;
    const path = join(folder, name);
    if (entry.isSymlink) out.set(name, { kind: "link", target: Deno.readLinkSync(path) });
    else if (entry.isDirectory) {
      out.set(name, { kind: "dir" });
      walk(folder, name, base, out);
    } else {
      let bytes: Uint8Array;
      try {
        bytes = Deno.readFileSync(path);
      } catch (error) {
        // Removed between the listing and the read: SQLite's own files come and go.
        if (error instanceof Deno.errors.NotFound) continue;
        throw error;
      }
      if (!prefix && idleNoise(name, base, bytes)) continue;
      out.set(name, fileEntry(bytes));
    }
  }
}

/**
 * Every entry of the folder holding the database `db` (recursively: files with their
 * bytes and SHA-256 digest, folders, links), except what SQLite changes on an idle open
 * and close: `<db>-shm`, and `<db>-wal` or `<db>-journal` when empty.
 *
 * @param db The database file the store was opened on.
 * @returns The folder's entries by relative path.
 * @example
 * ```ts
 * import { snapshotStoreFolder } from "./store_folder.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/store.db`, "data");
 * Deno.writeTextFileSync(`${dir}/store.db-shm`, "memory");
 * console.log([...snapshotStoreFolder(`${dir}/store.db`).keys()]); // ["store.db"]
 * ```
 */
export function snapshotStoreFolder(db: string): FolderSnapshot {
  const out: FolderSnapshot = new Map();
  walk(dirname(db), "", basename(db), out);
  return out;
}

function describe(entry: FolderEntry): string {
  if (entry.kind === "dir") return "a folder";
  if (entry.kind === "link") return `a link to ${entry.target}`;
  return `${entry.bytes.length} bytes, sha256 ${entry.digest}`;
}

/** How a file's bytes changed, or `undefined` when they did not (compared byte for byte). */
function fileChange(
  name: string,
  a: Extract<FolderEntry, { kind: "file" }>,
  b: Extract<FolderEntry, { kind: "file" }>,
): string | undefined {
  const digests = `sha256 ${a.digest} → ${b.digest}`;
  if (a.bytes.length !== b.bytes.length) {
    return `${name} went from ${a.bytes.length} to ${b.bytes.length} bytes (${digests})`;
  }
  const at = a.bytes.findIndex((byte, i) => byte !== b.bytes[i]);
  return at < 0 ? undefined : `${name} changed at byte ${at} (${a.bytes.length} bytes, ${digests})`;
}

/**
 * What changed between two snapshots of a store's folder: entries created, removed, or
 * whose kind, bytes or link target differ. Empty when nothing did.
 *
 * @param before The folder before.
 * @param after The folder after.
 * @returns One line per changed entry.
 * @example
 * ```ts
 * import { folderChanges } from "./store_folder.ts";
 * const bytes = new Uint8Array([1]);
 * const before = new Map([["a", { kind: "file" as const, bytes, digest: "x" }]]);
 * console.log(folderChanges(before, new Map())); // ["a removed (it held 1 bytes, sha256 x)"]
 * ```
 */
export function folderChanges(before: FolderSnapshot, after: FolderSnapshot): string[] {
  const out: string[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const [a, b] = [before.get(name), after.get(name)];
    if (!a) out.push(`${name} created (${describe(b!)})`);
    else if (!b) out.push(`${name} removed (it held ${describe(a)})`);
    else if (a.kind === "file" && b.kind === "file") {
      const change = fileChange(name, a, b);
      if (change) out.push(change);
    } else if (describe(a) !== describe(b)) {
      out.push(`${name} was ${describe(a)}, now ${describe(b)}`);
    }
  }
  return out;
}
