// The failed-fsync rule of the power-loss model, on synthetic logs (no recorder needed):
// the writes pending at a failed sync never land, even after a later sync succeeds, while
// bytes written again after it do; a sync that never reached the device drops nothing.
import { deepStrictEqual, ok } from "node:assert/strict";
import { killEnd, powerLossStates } from "./crash_states.ts";
import type { LogRecord, RecorderLog } from "./log.ts";
import { logRecord } from "./_test_helpers.ts";

const W = "/watched";
const EIO = 5, EBADF = 9;
const text = (s: string) => new TextEncoder().encode(s);
const read = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);

const record = logRecord;

const write = (seq: number, offset: number, s: string) =>
  record(seq, { a: offset, b: s.length, data: text(s) });
const failedSync = (seq: number, errno: number) =>
  record(seq, { kind: "sync", failed: true, injected: true, extra: errno });

/** A log over the existing empty file `f`: the records after its open. */
function logOf(...records: LogRecord[]): RecorderLog {
  const open = record(0, { kind: "open", counted: false, path: `${W}/f`, a: 2 });
  return { records: [open, ...records], tornBytes: 0, watched: W, pids: [1] };
}

const baseline = () => new Map([["f", new Uint8Array(0)]]);

function statesOf(log: RecorderLog) {
  return [...powerLossStates(log, { profile: "ext4-ordered", baseline: baseline() })];
}

Deno.test("powerLossStates: a failed fsync's writes are lost though a later fsync succeeds", () => {
  const log = logOf(
    write(1, 0, "one"),
    failedSync(2, EIO),
    write(3, 3, "two"),
    record(4, { kind: "sync" }),
  );
  const states = statesOf(log);
  const end = states.find((state) => state.label === "end: synced")!;
  deepStrictEqual(read(end.files.get("f")), "\0\0\0two");
  // No state after the failure holds the lost bytes; a SIGKILL (the page cache) does.
  const after = states.filter((state) => state.at === -1 || state.at > 2);
  ok(after.length > 1, `only ${after.length} states after the failed sync`);
  for (const state of after) {
    ok(!read(state.files.get("f")).includes("one"), `${state.label} kept a lost write`);
  }
  deepStrictEqual(read(killEnd(log, baseline()).files.get("f")), "onetwo");
});

Deno.test("powerLossStates: bytes written again after a failed fsync land with the next one", () => {
  const log = logOf(
    write(1, 0, "one"),
    failedSync(2, EIO),
    write(3, 0, "one"),
    write(4, 3, "two"),
    record(5, { kind: "sync" }),
  );
  const end = statesOf(log).find((state) => state.label === "end: synced")!;
  deepStrictEqual(read(end.files.get("f")), "onetwo");
});

Deno.test("powerLossStates: a sync that failed before reaching the device drops nothing", () => {
  const log = logOf(write(1, 0, "one"), failedSync(2, EBADF), record(3, { kind: "sync" }));
  const end = statesOf(log).find((state) => state.label === "end: synced")!;
  deepStrictEqual(read(end.files.get("f")), "one");
});
