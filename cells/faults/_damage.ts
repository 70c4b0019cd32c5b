// The damages F2 makes between lives, each on a fresh copy of the first life's files: the
// ways the field found session stores broken.
import { startsWithDatabaseHeader } from "../../internal/sqlite_files.ts";

/** One damage: its name, what it did, and the file it did it to. */
export interface Damage {
  /** `page`, `truncation`, `header` or `middle record`. */
  name: DamageName;
  /** What was done, for a FAIL line. */
  detail: string;
}

/** The damages, by name. */
export type DamageName = "page" | "truncation" | "header" | "middle record";

/** A sector: what a torn or lost write leaves zeroed. */
const SECTOR = 512;
/** The b-tree page type of a table leaf. */
const TABLE_LEAF = 0x0d;

/** Whether the bytes start with SQLite's header. */
export function isSqlite(bytes: Uint8Array): boolean {
  return startsWithDatabaseHeader(bytes);
}

/** The damages that apply to a store whose largest file holds `bytes`. */
export function damagesFor(bytes: Uint8Array): DamageName[] {
  // A log that is not SQLite has no pages or header to speak of, and a cut in its middle
  // reads as the torn tail every append-only log must tolerate: its damage is a record.
  return isSqlite(bytes) ? ["page", "truncation", "header"] : ["middle record"];
}

/** SQLite's page size from the header (1 means 65536). */
function pageSize(bytes: Uint8Array): number {
  const size = (bytes[16]! << 8) | bytes[17]!;
  return size === 1 ? 65536 : size;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number, to: number): number {
  outer: for (let i = from; i + needle.length <= to; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/**
 * The number (1-based) of the table-leaf page whose cells hold `text`, or `undefined`.
 * Only the table b-tree holds a message's text, so the page found holds message rows.
 */
export function pageHolding(bytes: Uint8Array, text: string): number | undefined {
  const size = pageSize(bytes);
  const needle = new TextEncoder().encode(text);
  for (let page = 1; page * size <= bytes.length; page++) {
    const start = (page - 1) * size;
    const header = page === 1 ? start + 100 : start;
    if (bytes[header] !== TABLE_LEAF) continue;
    if (indexOf(bytes, needle, start, start + size) !== -1) return page;
  }
  return undefined;
}

/**
 * Damages `bytes` (a copy) as `name` says; `needle` is the text of a message in the middle
 * of the transcript (the page damage hits the page holding it). Returns the new bytes and
 * what was done, or a reason it could not.
 */
export function damage(
  bytes: Uint8Array,
  name: DamageName,
  needle: string,
): { bytes: Uint8Array; detail: string } | { skip: string } {
  const out = bytes.slice();
  if (name === "page") {
    const page = pageHolding(bytes, needle);
    if (page === undefined) return { skip: `no table-leaf page holds the text "${needle}"` };
    const size = pageSize(bytes);
    // The sector holding the page's b-tree header and cell pointers, zeroed: what a lost
    // write leaves. Page 1 keeps its file header, so the file still opens.
    const start = (page - 1) * size + (page === 1 ? 100 : 0);
    out.fill(0, start, (page - 1) * size + SECTOR);
    return {
      bytes: out,
      detail: `page ${page} of ${
        bytes.length / size
      } (a table leaf holding message rows): its first ${SECTOR}-byte sector (b-tree header and cell pointers) zeroed`,
    };
  }
  if (name === "truncation") {
    const size = pageSize(bytes);
    const pages = bytes.length / size;
    const cut = Math.floor(pages / 2) * size + size / 2;
    return {
      bytes: out.subarray(0, cut),
      detail: `the file cut from ${bytes.length} to ${cut} bytes (in the middle of page ${
        Math.floor(pages / 2) + 1
      } of ${pages})`,
    };
  }
  if (name === "header") {
    const foreign = new TextEncoder().encode("PK\x03\x04 foreign file header ".repeat(5));
    out.set(foreign.subarray(0, 100), 0);
    return { bytes: out, detail: "its first 100 bytes replaced by a foreign header" };
  }
  return damageMiddleRecord(out);
}

/** Zeroes the middle of the record (line) that holds the file's middle byte. */
function damageMiddleRecord(out: Uint8Array): { bytes: Uint8Array; detail: string } | {
  skip: string;
} {
  const middle = Math.floor(out.length / 2);
  const start = out.lastIndexOf(0x0a, middle) + 1;
  let end = out.indexOf(0x0a, middle);
  if (end === -1) end = out.length;
  if (end - start < 8) return { skip: `the record at byte ${middle} is too short to damage` };
  // Zeros, never a newline: the record stays one record, and no longer parses.
  const from = start + Math.floor((end - start) / 4);
  const to = start + Math.ceil((3 * (end - start)) / 4);
  out.fill(0, from, to);
  const record = out.subarray(0, start).filter((byte) => byte === 0x0a).length + 1;
  return {
    bytes: out,
    detail:
      `record ${record} (bytes ${start} to ${end}, the file's middle): bytes ${from} to ${to} zeroed`,
  };
}
