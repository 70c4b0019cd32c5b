import { deepStrictEqual, ok } from "node:assert/strict";
import type { Answered } from "./_calls.ts";
import type { Answer } from "../contract/typed.ts";
import type { StoreState } from "./_store_state.ts";
import {
  comparable,
  judgePlanted,
  refusalProblems,
  resumeProblems,
  unchangedProblems,
} from "./judge.ts";

const typed = { threw: true, name: "SessionNotFoundError", message: "no session" };
const plain = { threw: true, name: "Error", message: "no session" };

function state(messages: StoreState["messages"], extra: Partial<StoreState> = {}): StoreState {
  return { messages, listed: Object.keys(messages).sort(), exists: {}, invariants: [], ...extra };
}

Deno.test("an append is refused only by a typed error", () => {
  deepStrictEqual(refusalProblems("append", typed), []);
  ok(refusalProblems("append", plain)[0]!.startsWith("the refusal is not typed"));
  ok(refusalProblems("append", { threw: false, value: 9 })[0]!.startsWith("it was accepted"));
  // A return is an acknowledgement, whatever it is.
  ok(refusalProblems("append", { threw: false, value: null })[0]!.startsWith("it was accepted"));
  ok(refusalProblems("append", undefined).length === 1);
});

Deno.test("a fork is refused by a typed error or false", () => {
  deepStrictEqual(refusalProblems("fork", typed), []);
  deepStrictEqual(refusalProblems("fork", { threw: false, value: false }), []);
  ok(
    refusalProblems("fork", { threw: false, value: { id: "f" } })[0]!.startsWith("it was accepted"),
  );
  ok(refusalProblems("fork", { threw: true, name: "SqliteError", message: "x" }).length === 1);
});

Deno.test("refused writes that created or changed something are named", () => {
  const before = state({ s: [[1, "user", "s0"]], ghost: [] }, { listed: ["s"] });
  deepStrictEqual(unchangedProblems(before, before, ["ghost"]), []);
  const created = state({ s: [[1, "user", "s0"]], ghost: [[2, "user", "x"]] }, {
    listed: ["ghost", "s"],
    exists: { ghost: true },
  });
  const problems = unchangedProblems(before, created, ["ghost"]);
  ok(problems.some((p) => p.startsWith("session ghost's messages changed")));
  ok(problems.some((p) => p === "listSessions lists new session(s): ghost"));
  ok(problems.some((p) => p === "getSession finds session ghost"));
  const half = state({ s: [[1, "user", "s0"]], ghost: [] }, {
    listed: ["s"],
    exists: { ghost: true },
  });
  deepStrictEqual(unchangedProblems(before, half, ["ghost"]), ["getSession finds session ghost"]);
  const lost = state({ s: [], ghost: [] }, { listed: ["s"] });
  ok(unchangedProblems(before, lost, [])[0]!.startsWith("session s's messages changed"));
});

Deno.test("a resume's appends must land above every earlier id", () => {
  const before = state({ s: [[3, "user", "s0"]], t: [[4, "user", "t0"]] });
  const after = state({ s: [[3, "user", "s0"], [5, "user", "r"]], t: [[4, "user", "t0"]] });
  deepStrictEqual(resumeProblems(before, after, [{ session: "s", content: "r", id: 5 }]), []);
  const low = state({ s: [[2, "user", "r"], [3, "user", "s0"]], t: [[4, "user", "t0"]] });
  const problems = resumeProblems(before, low, [{ session: "s", content: "r", id: 2 }]);
  ok(problems[0] === "the append to s got id 2, not above 4");
  const lost = resumeProblems(before, before, [{ session: "s", content: "r", id: 5 }]);
  ok(lost[0]!.startsWith("session s's messages changed"));
});

function planted(...rest: [string, Answer][]): Answered[] {
  return [
    { label: "open", answer: { threw: false, value: null } },
    ...rest.map(([label, answer]) => ({ label, answer })),
  ];
}
const served = { threw: false, value: [{ id: 0 }] };
const accepted = { threw: false, value: 12 };

Deno.test("a planted state is refused by a report, typed reads or a typed open", () => {
  const reported = judgePlanted(
    "s",
    planted(
      ["checkInvariants", { threw: false, value: ["message id the store never gave: 0"] }],
      ["read: getMessages", served],
      ["write: appendMessage", accepted],
    ),
  );
  deepStrictEqual(reported, { refusedBy: "checkInvariants", refusal: [], writes: [] });
  const reads = judgePlanted(
    "s",
    planted(
      ["read: getMessages", typed],
      ["write: appendMessage", typed],
    ),
  );
  deepStrictEqual(reads, { refusedBy: "reads", refusal: [], writes: [] });
  const open = judgePlanted("s", [{ label: "open", answer: { ...typed, name: "CorruptError" } }]);
  deepStrictEqual(open.refusedBy, "open");
  const untypedOpen = judgePlanted("s", [{ label: "open", answer: plain }]);
  ok(untypedOpen.refusal[0]!.startsWith("the open is not typed"));
});

Deno.test("a planted state served as whole, or written to unreported, fails", () => {
  const blind = judgePlanted(
    "ghost",
    planted(
      ["checkInvariants", { threw: false, value: [] }],
      ["read: getMessages", served],
      ["write: appendMessage", accepted],
    ),
  );
  ok(blind.refusedBy === null);
  ok(blind.refusal[0]!.startsWith("ghost served as if whole (checkInvariants returned [])"));
  ok(blind.writes[0]!.startsWith("write: appendMessage to ghost accepted with no report first"));
  // Typed reads but an accepted write: the write is the failure.
  const written = judgePlanted(
    "s",
    planted(
      ["read: getMessages", typed],
      ["write: appendMessage", accepted],
    ),
  );
  deepStrictEqual(written.refusal, []);
  ok(written.writes.length === 1);
  // Some reads typed, one served: not refused.
  const partly = judgePlanted(
    "s",
    planted(["read: getMessages", typed], ["read: getSession", served]),
  );
  ok(partly.refusal.length === 1);
  const untypedRead = judgePlanted(
    "s",
    planted(
      ["checkInvariants", { threw: false, value: ["x"] }],
      ["read: getMessages", plain],
    ),
  );
  ok(untypedRead.refusal[0]!.startsWith("read: getMessages is not typed"));
});

Deno.test("two passes compare without their error messages", () => {
  const a = planted(["read: getMessages", { ...typed, message: "at 1" }]);
  const b = planted(["read: getMessages", { ...typed, message: "at 2" }]);
  deepStrictEqual(comparable(a), comparable(b));
});
