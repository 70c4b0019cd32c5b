// Cell 11's judge, without processes.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  durableProblems,
  liveRenewalProblem,
  movesProblems,
  recoveredProblems,
  staleRenewalProblem,
} from "./judge.ts";

const accepted = { threw: false, value: true };
const refused = { threw: false, value: false };
const typed = { threw: true, name: "CompressionLockError", message: "not yours" };
const untyped = { threw: true, name: "Error", message: "boom" };

Deno.test("a stale renewal must be refused, by false or a typed error", () => {
  strictEqual(staleRenewalProblem(refused), undefined);
  strictEqual(staleRenewalProblem(typed), undefined);
  ok(staleRenewalProblem(accepted)?.startsWith("the stale renewal was accepted"));
  ok(staleRenewalProblem(untyped)?.startsWith("the refusal is not typed"));
});

Deno.test("after a takeover, the third holder is refused at once and the new holder publishes", () => {
  const good = [
    { name: "newTakesOver" as const, answer: accepted },
    { name: "thirdAtOnce" as const, answer: refused },
    { name: "newPublishes" as const, answer: accepted },
    { name: "newReleases" as const, answer: accepted },
  ];
  deepStrictEqual(movesProblems("taken", good), { problems: [], mistimed: [] });
  const lost = good.map((m) => m.name === "thirdAtOnce" ? { ...m, answer: accepted } : m);
  ok(movesProblems("taken", lost).problems[0]?.includes("the new holder lost it"));
});

Deno.test("with nobody taking over, the lapsed lock must be free after the renewal", () => {
  const revived = [
    { name: "thirdAtOnce" as const, answer: refused },
    { name: "thirdPublishes" as const, answer: accepted },
  ];
  const { problems } = movesProblems("expired", revived);
  strictEqual(problems.length, 1);
  ok(problems[0]!.includes("the stale renewal revived it"), problems[0]);
});

Deno.test("a third holder past the new holder's own expiry must take over; a mistimed move is not judged", () => {
  const extended = [
    { name: "newTakesOver" as const, answer: accepted },
    { name: "thirdAtOnce" as const, answer: accepted, mistimed: "too late" },
    { name: "thirdAfterExpiry" as const, answer: refused },
    { name: "thirdPublishes" as const, answer: typed },
  ];
  const { problems, mistimed } = movesProblems("lapsing", extended);
  strictEqual(problems.length, 2);
  ok(problems[0]!.includes("extended the new holder's lease"), problems[0]);
  deepStrictEqual(mistimed, ["thirdAtOnce: too late"]);
});

Deno.test("a recovered state: two reads alike, invariants empty, integrity ok", () => {
  const state = { sessions: [], children: {}, invariants: [] };
  deepStrictEqual(recoveredProblems(state, state, undefined), []);
  const other = { ...state, children: { c: ["x"] } };
  ok(recoveredProblems(state, other, "ok")[0]?.startsWith("two fresh reads differ"));
  deepStrictEqual(recoveredProblems({ ...state, invariants: ["bad"] }, state, "corrupt").length, 3);
});

Deno.test("a live renewal must be acknowledged, durable, and touch only its session", () => {
  strictEqual(liveRenewalProblem({ before: 0, acquiredAt: 10, answer: accepted }, 1000), undefined);
  deepStrictEqual(
    liveRenewalProblem({ before: 0, acquiredAt: 1200, answer: refused }, 1000)?.late,
    true,
  );
  deepStrictEqual(durableProblems(refused, accepted), []);
  ok(durableProblems(accepted, accepted)[0]?.includes("the acknowledged renewal was lost"));
  ok(durableProblems(refused, refused)[0]?.includes("a session it did not name"));
});
