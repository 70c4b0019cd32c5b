// The durability patterns read from a recorder log (synthetic logs, no recorder needed):
// an acknowledgement with a write not synced, and none when the write went through an
// O_DSYNC handle; a created store file whose folder was not synced, and none once it is; a
// file renamed onto the store's before its data was synced.
import { deepStrictEqual } from "node:assert/strict";
import type { LogRecord, RecorderLog } from "../../recorder/log.ts";
import { logRecord as record } from "../../recorder/_test_helpers.ts";
import { powerLossPattern } from "./pattern.ts";

const DB = "/run/db/store.db";
const O_RDWR = 0x2, O_CREAT = 0x40, O_DSYNC = 0x1000;
const text = (s: string) => new TextEncoder().encode(s);
const open = (seq: number, flags: number, made: boolean) =>
  record(seq, { kind: "open", path: DB, a: flags, extra: made ? 1 : 0 });
const append = (seq: number) => record(seq, { a: 0, b: 3, data: text("one") });
const sync = (seq: number, handle = 1) => record(seq, { kind: "sync", handle });
const folderSync = (seq: number) => [
  record(seq, { kind: "open", handle: 2, path: "/run/db", a: 0x10000 }),
  sync(seq + 1, 2),
];
const ack = (seq: number) => record(seq, { kind: "mark", counted: false, data: text("{}\n") });
const log = (...records: LogRecord[]): RecorderLog => ({
  records: records.map((r, seq) => ({ ...r, seq })),
  tornBytes: 0,
  watched: "/run/db",
  pids: [1],
});

Deno.test("powerLossPattern: an unsynced write at an acknowledgement", () => {
  deepStrictEqual(
    powerLossPattern(log(open(0, O_RDWR, false), append(1), ack(2)), DB),
    "unsynced-ack-power-loss",
  );
  deepStrictEqual(
    powerLossPattern(log(open(0, O_RDWR, false), append(1), sync(2), ack(3)), DB),
    undefined,
  );
});

Deno.test("powerLossPattern: a write through an O_DSYNC handle is synced when it returns", () => {
  deepStrictEqual(
    powerLossPattern(log(open(0, O_RDWR | O_DSYNC, false), append(1), ack(2)), DB),
    undefined,
  );
});

Deno.test("powerLossPattern: a created store file with no folder sync before an acknowledgement", () => {
  const created = open(0, O_RDWR | O_CREAT | O_DSYNC, true);
  deepStrictEqual(
    powerLossPattern(log(created, append(1), ack(2)), DB),
    "unsynced-name-power-loss",
  );
  deepStrictEqual(
    powerLossPattern(log(created, ...folderSync(1), append(3), ack(4)), DB),
    undefined,
  );
  // An open with O_CREAT of a file that was there already makes no name.
  deepStrictEqual(
    powerLossPattern(log(open(0, O_RDWR | O_CREAT | O_DSYNC, false), append(1), ack(2)), DB),
    undefined,
  );
});

Deno.test("powerLossPattern: a file renamed onto the store's before its data was synced", () => {
  const TEMPORARY = `${DB}.7.tmp`;
  const made = record(0, { kind: "open", path: TEMPORARY, a: O_RDWR | O_CREAT, extra: 1 });
  const rename = (seq: number) => record(seq, { kind: "rename", path: TEMPORARY, path2: DB });
  deepStrictEqual(
    powerLossPattern(log(made, append(1), rename(2), ...folderSync(3), ack(5)), DB),
    "unsynced-rename-power-loss",
  );
  // Synced after the rename through the handle still open: the name could land first.
  deepStrictEqual(
    powerLossPattern(log(made, append(1), rename(2), sync(3), ...folderSync(4), ack(6)), DB),
    "unsynced-rename-power-loss",
  );
  deepStrictEqual(
    powerLossPattern(log(made, append(1), sync(2), rename(3), ...folderSync(4), ack(6)), DB),
    undefined,
  );
  deepStrictEqual(
    powerLossPattern(log(made, append(1), sync(2), rename(3), ack(4)), DB),
    "unsynced-name-power-loss",
  );
});

Deno.test("powerLossPattern: a store whose path is a folder, its names synced or not", () => {
  const SEGMENT = `${DB}/seg-1.log`;
  const mkdir = record(0, { kind: "mkdir", path: DB });
  const parentSync = folderSync(1);
  const made = record(3, { kind: "open", handle: 3, path: SEGMENT, a: O_RDWR | O_CREAT, extra: 1 });
  const segmentFolderSync = [
    record(4, { kind: "open", handle: 4, path: DB, a: 0x10000 }),
    sync(5, 4),
  ];
  const write = record(6, { handle: 3, a: 0, b: 3, data: text("one") });
  const synced = sync(7, 3);
  deepStrictEqual(
    powerLossPattern(
      log(mkdir, ...parentSync, made, ...segmentFolderSync, write, synced, ack(8)),
      DB,
    ),
    undefined,
  );
  deepStrictEqual(
    powerLossPattern(log(mkdir, ...parentSync, made, write, synced, ack(8)), DB),
    "unsynced-name-power-loss",
  );
  deepStrictEqual(
    powerLossPattern(log(mkdir, made, ...segmentFolderSync, write, synced, ack(8)), DB),
    "unsynced-name-power-loss",
  );
  deepStrictEqual(
    powerLossPattern(log(mkdir, ...parentSync, made, ...segmentFolderSync, write, ack(8)), DB),
    "unsynced-ack-power-loss",
  );
});
