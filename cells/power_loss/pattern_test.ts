// The durability patterns read from a recorder log (synthetic logs, no recorder needed):
// an acknowledgement with a write not synced, and none when the write went through an
// O_DSYNC handle; a created store file whose folder was not synced, and none once it is.
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
