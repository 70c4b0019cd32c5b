// Cell 12's judge, without processes.
import { deepStrictEqual, ok } from "node:assert/strict";
import { type HandoffEntry, listProblems, possibleStates, stateProblems } from "./judge.ts";

const inv = (seq: number, op: string, session: string): HandoffEntry => ({
  k: "inv",
  seq,
  op,
  session,
});
const ack = (seq: number, op: string, session: string, answer: string): HandoffEntry => ({
  k: "ack",
  seq,
  op,
  session,
  answer,
});

Deno.test("possible states: the last acknowledged success, and the operation in flight", () => {
  const entries = [
    inv(0, "requestHandoff", "a"),
    ack(0, "requestHandoff", "a", "true"),
    inv(1, "claimHandoff", "a"),
    ack(1, "claimHandoff", "a", "false"),
    inv(2, "failHandoff", "b"),
    ack(2, "failHandoff", "b", "true"),
    inv(3, "requestHandoff", "b"),
    inv(0, "completeHandoff", "c"),
    ack(0, "completeHandoff", "c", "threw HandoffOwnershipError"),
  ];
  deepStrictEqual(possibleStates({ a: null, b: "running", c: "running" }, entries), {
    a: ["pending"],
    b: ["failed", "pending"],
    c: ["running"],
  });
});

Deno.test("a state no acknowledged order leaves is a lost operation", () => {
  deepStrictEqual(stateProblems({ a: ["pending", "running"] }, { a: "running" }), []);
  deepStrictEqual(stateProblems({ a: ["running"] }, { a: "pending" }), [
    "a is pending, not running",
  ]);
});

Deno.test("the list: every pending session once, nothing else", () => {
  const states = { a: "pending", b: "running", c: "pending", d: null };
  const possible = { a: ["pending"], b: ["running"], c: ["pending"], d: [null] };
  deepStrictEqual(listProblems(["a", "c"], states, possible), []);
  deepStrictEqual(listProblems(["a", "a", "c"], states, possible), ["a is listed 2 times"]);
  deepStrictEqual(listProblems(["a", "b", "c"], states, possible), [
    "b is listed, and it is running",
  ]);
  deepStrictEqual(listProblems(["a"], states, possible), ["c is pending and not listed"]);
  deepStrictEqual(listProblems(["a", "c", "x"], states, possible), [
    "x is listed, and it is unknown",
  ]);
});

Deno.test("the list against what was acknowledged, when the states read lie too", () => {
  // The store reports b pending and lists it, but its claim was acknowledged.
  const lies = listProblems(["a", "b"], { a: "pending", b: "pending" }, {
    a: ["pending"],
    b: ["running"],
  });
  ok(lies.some((p) => p.includes("its last acknowledged operation left it running")), lies[0]);
  const dropped = listProblems([], { a: "running" }, { a: ["pending"] });
  ok(dropped[0]?.includes("acknowledged and unclaimed, and it is not listed"), dropped[0]);
});
