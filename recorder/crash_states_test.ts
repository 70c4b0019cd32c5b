// The failed-fsync rule of the power-loss model, on synthetic logs (no recorder needed):
// the writes pending at a failed sync never land, even after a later sync succeeds, while
// bytes written again after it do; a sync that never reached the device drops nothing.
// And the synchronous-write rule: a write through an O_DSYNC or O_SYNC handle is durable
// once it returns.
import { deepStrictEqual, ok, throws } from "node:assert/strict";
import { isHarnessError } from "../harness/harness_error.ts";
import { killEnd, ModelError, powerLossStates } from "./crash_states.ts";
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

const O_RDWR = 0x2, O_CREAT = 0x40, O_DSYNC = 0x1000, O_SYNC = 0x101000;
const openAs = (seq: number, handle: number, flags: number, name = "f") =>
  record(seq, {
    kind: "open",
    counted: (flags & O_CREAT) !== 0,
    handle,
    path: `${W}/${name}`,
    a: flags,
  });

for (const [flag, bits] of [["O_DSYNC", O_DSYNC], ["O_SYNC", O_SYNC]] as const) {
  Deno.test(`powerLossStates: a write through an ${flag} handle is durable once it returns`, () => {
    const log = logOf(
      openAs(1, 2, O_RDWR | bits),
      record(2, { handle: 2, a: 0, b: 3, data: text("one") }),
      record(3, { handle: 2, a: 3, b: 3, data: text("two") }),
    );
    // A state's files are made from the model as it stands: read them as they come.
    const seen: { at: number; label: string; f: string }[] = [];
    for (const state of powerLossStates(log, { profile: "ext4-ordered", baseline: baseline() })) {
      seen.push({ at: state.at, label: state.label, f: read(state.files.get("f")) });
    }
    // Each write is a sync point: a power loss in it finds it pending, the ones before durable.
    const during = seen.filter((state) => state.at === 3);
    ok(during.length > 1, `only ${during.length} states during the second write`);
    for (const state of during) {
      ok(state.f.startsWith("one"), `${state.label} lost a returned write: ${state.f}`);
    }
    ok(during.some((state) => state.f === "one"), "no state drops the pending write");
    for (const state of seen.filter((state) => state.at === -1)) {
      deepStrictEqual(state.f, "onetwo", state.label);
    }
  });
}

Deno.test("powerLossStates: a synchronous write makes its file's data durable, never its name", () => {
  const log: RecorderLog = {
    records: [
      openAs(1, 1, O_RDWR | O_CREAT | O_DSYNC, "g"),
      record(2, { handle: 1, a: 0, b: 3, data: text("one") }),
    ],
    tornBytes: 0,
    watched: W,
    pids: [1],
  };
  const ends = [...powerLossStates(log, { profile: "posix" })].filter((s) => s.at === -1);
  ok(ends.some((state) => !state.files.has("g")), "the unsynced name survived every state");
  for (const state of ends) {
    if (state.files.has("g")) deepStrictEqual(read(state.files.get("g")), "one", state.label);
  }
});

Deno.test("powerLossStates: a synchronous write over another handle's unsynced one is not judged", () => {
  const log = logOf(
    openAs(1, 2, O_RDWR | O_DSYNC),
    write(2, 0, "one"),
    record(3, { handle: 2, a: 3, b: 3, data: text("two") }),
  );
  throws(() => statesOf(log), (error: Error) => {
    ok(error instanceof ModelError && isHarnessError(error), String(error));
    ok(/record 2 left an unsynced write/.test(error.message), error.message);
    return true;
  });
  // A SIGKILL keeps every completed call: the same log's kill states are judged.
  deepStrictEqual(read(killEnd(log, baseline()).files.get("f")), "onetwo");
});
