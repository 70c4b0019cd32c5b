// The torn last writes: enumerated at every instant where a file has an unsynced write,
// cut at each sector boundary it spans and one byte before its end, zeroed and garbage,
// everything else kept; counted in the stats. A synthetic log, no recorder needed.
import { deepStrictEqual, ok } from "node:assert/strict";
import { powerLossStates, type PowerLossStats, tearCuts } from "./crash_states.ts";
import type { RecorderLog } from "./log.ts";
import { logRecord } from "./_test_helpers.ts";

const W = "/watched";
const O_CREAT = 0x40;

const record = logRecord;

const text = (s: string) => new TextEncoder().encode(s);

/** A log file: its first line written and synced, then a 600-byte line and its sync. */
function appendLog(): { log: RecorderLog; first: Uint8Array; second: Uint8Array } {
  const first = text("first line\n");
  const second = text(`${"x".repeat(599)}\n`);
  const records = [
    record(0, { kind: "open", handle: 1, path: `${W}/log`, a: O_CREAT }),
    record(1, { kind: "write", a: 0, b: first.length, data: first }),
    record(2, { kind: "sync", extra: 0 }),
    record(3, { kind: "write", a: first.length, b: second.length, data: second }),
    record(4, { kind: "sync", extra: 1 }),
  ];
  return { log: { records, tornBytes: 0, watched: W, pids: [1] }, first, second };
}

Deno.test("tearCuts: every 512-byte boundary inside a write, 4 KiB ones marked, then one byte before its end", () => {
  deepStrictEqual(tearCuts(11, 600), [{ at: 512, boundary: "512" }, {
    at: 610,
    boundary: "byte",
  }]);
  deepStrictEqual(tearCuts(4000, 600), [{ at: 4096, boundary: "4096" }, {
    at: 4599,
    boundary: "byte",
  }]);
  // A write ending one byte past a boundary: that boundary is the cut one byte before its end.
  deepStrictEqual(tearCuts(0, 513), [{ at: 512, boundary: "512" }]);
  deepStrictEqual(tearCuts(100, 1), [], "a one-byte write cannot be torn");
  deepStrictEqual(tearCuts(0, 4096).length, 8, "7 sector boundaries and the last byte");
});

Deno.test("powerLossStates: the last unsynced write is torn at each cut, zeroed and garbage", () => {
  const { log, first, second } = appendLog();
  const stats: PowerLossStats = { instants: 0, tearable: 0, torn: 0 };
  // A state's files are made lazily: read them before the generator moves on.
  const states = [...powerLossStates(log, { profile: "posix", stats })];
  const files = new Map<unknown, Uint8Array>();
  for (const s of powerLossStates(log, { profile: "posix" })) files.set(s.key, s.files.get("log")!);
  // Before sync #2 the first line is pending (cut one byte before its end), before #4 the second.
  deepStrictEqual(states.filter((s) => s.torn?.seq === 1).map((s) => s.torn!.at), [10, 10]);
  const torn = states.filter((s) => s.torn?.seq === 3);
  deepStrictEqual(
    torn.map((s) => [s.torn!.at, s.torn!.boundary, s.torn!.fill]),
    [[512, "512", "zero"], [512, "512", "garbage"], [610, "byte", "zero"], [
      610,
      "byte",
      "garbage",
    ]],
  );
  deepStrictEqual(stats, { instants: 3, tearable: 2, torn: 6 });
  for (const state of torn) {
    const content = files.get(state.key)!;
    deepStrictEqual(content.length, first.length + second.length, state.label);
    deepStrictEqual(
      content.subarray(0, state.torn!.at),
      new Uint8Array([...first, ...second]).subarray(0, state.torn!.at),
      state.label,
    );
    const tail = content.subarray(state.torn!.at);
    if (state.torn!.fill === "zero") ok(tail.every((b) => b === 0), state.label);
    else ok(tail.some((b, i) => b !== second[state.torn!.at - first.length + i]), state.label);
    ok(state.label.includes("torn log #3"), state.label);
  }
  // The garbage is the same wherever the state is made: one key, one content.
  const contents = () => {
    const out: [string, Uint8Array | undefined][] = [];
    for (const s of powerLossStates(log, { profile: "posix" })) {
      if (s.torn) out.push([s.key, s.files.get("log")]);
    }
    return out;
  };
  deepStrictEqual(contents(), contents());
});

Deno.test("powerLossStates: no torn states when every write is synced, or when asked for none", () => {
  const { log } = appendLog();
  const stats: PowerLossStats = { instants: 0, tearable: 0, torn: 0 };
  const states = [...powerLossStates(log, { profile: "posix", tornLast: false, stats })];
  deepStrictEqual(states.filter((s) => s.torn).length, 0);
  deepStrictEqual(stats.torn, 0);
  const synced: RecorderLog = { ...log, records: [log.records[0]!, log.records[2]!] };
  const none: PowerLossStats = { instants: 0, tearable: 0, torn: 0 };
  deepStrictEqual(
    [...powerLossStates(synced, { profile: "posix", stats: none })].filter((s) => s.torn).length,
    0,
  );
  deepStrictEqual(none.tearable, 0);
});
