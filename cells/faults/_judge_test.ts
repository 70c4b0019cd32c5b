// F1's judge on journals and reads written by hand: each rule fails when broken.
import { deepStrictEqual } from "node:assert/strict";
import type { FaultMark } from "./_program.ts";
import { afterProblems, processProblems, promisedBy, stateProblems } from "./_judge.ts";

const ok: Deno.CommandStatus = { success: true, code: 0, signal: null };
const intent = (i: number, op: string, texts: string[] = []): FaultMark => ({
  i,
  op,
  at: "intent",
  texts,
});
const ack = (i: number, op: string): FaultMark => ({ i, op, at: "ack", result: i });
const threw = (i: number, op: string, name: string): FaultMark => ({
  i,
  op,
  at: "threw",
  name,
  message: "disk I/O error",
});

/** create, append a, batch [b1, b2] (threw), append c. */
const journal: FaultMark[] = [
  intent(0, "create"),
  ack(0, "create"),
  intent(1, "append", ["a"]),
  ack(1, "append"),
  intent(2, "batch", ["b1", "b2"]),
  threw(2, "batch", "SessionDBStorageError"),
  intent(3, "append", ["c"]),
  ack(3, "append"),
];
const read = (texts: string[], ids = texts.map((_, i) => i + 1)) => ({
  db: "s.db",
  read: { texts, ids },
});

Deno.test("F1 judge: every acknowledged write once and in order; a failed batch whole or absent", () => {
  const promised = promisedBy(journal);
  deepStrictEqual(stateProblems(read(["a", "c"]), promised), []);
  deepStrictEqual(stateProblems(read(["a", "b1", "b2", "c"]), promised), []);
  deepStrictEqual(stateProblems(read(["a"]), promised), ['acknowledged "c" is lost']);
  deepStrictEqual(stateProblems(read(["c", "a"]), promised), [
    'acknowledged "c" is out of order',
  ]);
  deepStrictEqual(stateProblems(read(["a", "a", "c"]), promised), ['"a" is there 2 times']);
  deepStrictEqual(stateProblems(read(["a", "b1", "c"]), promised), [
    "a batch is half there: 1 of 2 (b1, b2)",
  ]);
  deepStrictEqual(stateProblems(read(["a", "x", "c"]), promised), [
    '"x" was never written by anyone',
  ]);
  deepStrictEqual(stateProblems(read(["a", "c"], [2, 1]), promised), [
    "ids do not increase: 2 then 1",
  ]);
  deepStrictEqual(stateProblems({ db: "s.db", open: "Error: boom" }, promised), [
    "a fresh process cannot open the store: Error: boom",
  ]);
});

Deno.test("F1 judge: a hang names its operation, a death is no throw, an error must be typed", () => {
  const hung = [...journal, intent(4, "append", ["d"])];
  const died: Deno.CommandStatus = { success: false, code: 1, signal: null };
  deepStrictEqual(processProblems({ hung: true, status: ok, stderr: "", marks: hung }, 20_000), [
    "the store hung for 20 s in append after the fault",
  ]);
  deepStrictEqual(processProblems({ hung: false, status: died, stderr: "x", marks: [] }, 1), [
    "the store's process died (exit 1) instead of throwing: x",
  ]);
  deepStrictEqual(
    processProblems(
      { hung: false, status: ok, stderr: "", marks: [threw(5, "append", "Error")] },
      1,
    ),
    ["append threw an untyped Error: disk I/O error"],
  );
  deepStrictEqual(processProblems({ hung: false, status: ok, stderr: "", marks: journal }, 1), []);
});

Deno.test("F1 judge: once the fault is gone, an append is kept or refused with a typed error", () => {
  const base = read([]);
  deepStrictEqual(
    afterProblems({ ...base, append: { acked: true }, readBack: read(["z"]).read }, "z"),
    [],
  );
  deepStrictEqual(
    afterProblems({ ...base, append: { acked: true }, readBack: read([]).read }, "z"),
    ['once the fault was gone, an acknowledged append ("z") is not there'],
  );
  deepStrictEqual(
    afterProblems({ ...base, append: { threw: { name: "StorageError", message: "full" } } }, "z"),
    [],
  );
  deepStrictEqual(
    afterProblems({ ...base, append: { threw: { name: "TypeError", message: "full" } } }, "z"),
    ["once the fault was gone, an append threw an untyped TypeError: full"],
  );
});
