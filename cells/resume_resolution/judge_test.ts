// Cell 8's judge on hand-made states: no processes, no store.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { StoredSession } from "../contract/target.ts";
import {
  chainTruth,
  endedAppendViolations,
  firstLifeChains,
  missingAppends,
  reopenViolations,
  resumedViolations,
  viewViolations,
} from "./judge.ts";

/** A session: ended by `reason` when given. */
const s = (id: string, parent: string | null, reason: string | null = null): StoredSession => ({
  id,
  parentSessionId: parent,
  endedAt: reason ? 1 : null,
  endReason: reason,
});
const chain = ["c0-0", "c0-1", "c0-2"];
const whole = [s("c0-0", null, "compression"), s("c0-1", "c0-0", "compression"), s("c0-2", "c0-1")];
const halfway = [s("c0-0", null, "compression"), s("c0-1", "c0-0")];

Deno.test("chainTruth: the tip is the root followed through every whole rotation", () => {
  const truth = chainTruth(chain, whole, new Set(["c0-0", "c0-1"]));
  strictEqual(truth.tip, "c0-2");
  deepStrictEqual(truth.upToTip, chain);
  deepStrictEqual(truth.liveChild, { "c0-0": null, "c0-1": "c0-2", "c0-2": null });
  deepStrictEqual(truth.violations, []);
  const unpublished = chainTruth(chain, halfway, new Set(["c0-0"]));
  strictEqual(unpublished.tip, "c0-1");
  deepStrictEqual(unpublished.liveChild, { "c0-0": "c0-1", "c0-1": null });
  deepStrictEqual(unpublished.violations, []);
});

Deno.test("chainTruth: a stranded chain, a partial rotation, a lost rotation, a missing root", () => {
  const stranded = chainTruth(
    chain,
    [...halfway.slice(0, 1), s("c0-1", "c0-0", "compression")],
    new Set(),
  );
  strictEqual(stranded.tip, "c0-1");
  ok(stranded.violations[0]?.includes("the chain is stranded"), stranded.violations[0]);
  // The child written before its parent ended: two live sessions.
  const partial = chainTruth(chain, [s("c0-0", null), s("c0-1", "c0-0")], new Set());
  strictEqual(partial.tip, "c0-0");
  ok(partial.violations[0]?.includes("c0-1 exists past the live tip c0-0"), partial.violations[0]);
  const lost = chainTruth(chain, halfway, new Set(["c0-0", "c0-1"]));
  deepStrictEqual(lost.violations, [
    "the acknowledged rotation of c0-1 is not whole after recovery",
  ]);
  const rootless = chainTruth(chain, [s("c0-1", "c0-0")], new Set());
  strictEqual(rootless.tip, undefined);
  deepStrictEqual(rootless.violations, ["c0-1 present without the root c0-0"]);
  deepStrictEqual(chainTruth(chain, [], new Set()).violations, []);
});

Deno.test("viewViolations: every session must resolve to the tip; the live child only from its parent", () => {
  const truth = chainTruth(chain, whole, new Set());
  const right = {
    resolved: { "c0-0": "c0-2", "c0-1": "c0-2", "c0-2": "c0-2" },
    live: { "c0-0": null, "c0-1": "c0-2", "c0-2": null },
  };
  deepStrictEqual(viewViolations([truth], right, { where: "here", sessions: whole }), {
    resolve: [],
    live: [],
  });
  const wrong = {
    resolved: { "c0-0": "c0-0", "c0-1": "c0-3", "c0-2": "threw Error: x" },
    live: { "c0-0": "c0-1", "c0-1": "c0-2", "c0-2": null },
  };
  const found = viewViolations([truth], wrong, { where: "here", sessions: whole });
  deepStrictEqual(found.resolve, [
    "here: resolveResumeSessionId(c0-0) = c0-0 (ended: compression), expected the live tip c0-2",
    "here: resolveResumeSessionId(c0-1) = c0-3 (no such session), expected the live tip c0-2",
    "here: resolveResumeSessionId(c0-2) = threw Error: x, expected the live tip c0-2",
  ]);
  deepStrictEqual(found.live, [
    "here: findLiveCompressionChild(c0-0) = c0-1 (ended: compression), expected undefined",
  ]);
  // A store without findLiveCompressionChild: nothing judged of it.
  deepStrictEqual(
    viewViolations([truth], { resolved: right.resolved }, { where: "here", sessions: whole }).live,
    [],
  );
});

Deno.test("reopenViolations: orphans reopened, parents with a child refused, nothing else changed", () => {
  const orphaned = [s("a", null, "compression"), s("p", null, "compression"), s("q", "p")];
  const after = [s("a", null), orphaned[1]!, orphaned[2]!];
  const messages = { a: [{ id: 1, content: "x" }] };
  const good = [
    { id: "a", orphan: true, answer: { threw: false, value: true } },
    { id: "p", orphan: false, answer: { threw: false, value: false } },
  ];
  const before = { sessions: orphaned, messages };
  deepStrictEqual(reopenViolations(good, before, { sessions: after, messages }), []);
  const reopenedParent = [s("a", null), s("p", null), orphaned[2]!];
  const bad = [good[0]!, { id: "p", orphan: false, answer: { threw: false, value: true } }];
  const found = reopenViolations(bad, before, { sessions: reopenedParent, messages });
  ok(found[0]?.startsWith("reopenOrphanedCompressionSession(p) returned true"), found[0]);
  ok(found[1]?.startsWith("the recovery changed other sessions"), found[1]);
  const kept = reopenViolations(
    [{ id: "a", orphan: true, answer: { threw: false, value: false } }],
    before,
    before,
  );
  ok(kept[0]?.startsWith("the orphan a (ended by compression"), kept[0]);
  // A typed refusal is a refusal; a generic error is not.
  const typed = { threw: true, name: "CompressionSessionClosedError", message: "has a child" };
  const plain = { threw: true, name: "Error", message: "oops" };
  deepStrictEqual(
    reopenViolations([{ id: "p", orphan: false, answer: typed }], before, before),
    [],
  );
  strictEqual(
    reopenViolations([{ id: "p", orphan: false, answer: plain }], before, before).length,
    1,
  );
});

Deno.test("endedAppendViolations: the typed refusal, and nothing written", () => {
  const rows = [{ id: 1, content: "x" }];
  const refused = { threw: true, name: "CompressionSessionClosedError", message: "rotated" };
  deepStrictEqual(
    endedAppendViolations([{ id: "p", answer: refused, before: rows, after: rows }]),
    [],
  );
  const accepted = { threw: false, value: 2 };
  const grown = [...rows, { id: 2, content: "after its rotation" }];
  deepStrictEqual(
    endedAppendViolations([{ id: "p", answer: accepted, before: rows, after: grown }]),
    [
      "append to the ended parent p returned 2",
      "the refused append changed p: 1 message(s) before, 2 after",
    ],
  );
});

Deno.test("missingAppends and firstLifeChains", () => {
  const acks = [
    { op: "append" as const, session: "c0-0", id: 1, content: "a" },
    { op: "rotate" as const, parentId: "c0-0", childId: "c0-1" },
    { op: "append" as const, session: "c1-0", id: 5, content: "b" },
  ];
  deepStrictEqual(missingAppends(acks, { "c0-0": [{ id: 1, content: "a" }], "c1-0": [] }), [
    'acknowledged append 5 ("b") missing from c1-0',
  ]);
  deepStrictEqual(firstLifeChains([s("c0-0", null)], acks).map((c) => c[0]), ["c0-0", "c1-0"]);
  deepStrictEqual(firstLifeChains([], []), []);
});

Deno.test("resumedViolations: the resumer resolved the tip, appended after the chain and rotated it", () => {
  const acks = [
    { op: "resolved" as const, root: "c0-0", tip: "c0-1" },
    { op: "append" as const, session: "c0-1", id: 9, content: "r0" },
    { op: "rotate" as const, parentId: "c0-1", childId: "c0-1.r" },
    { op: "resolved" as const, root: "c0-0", tip: "c0-1.r" },
    { op: "append" as const, session: "c0-1.r", id: 11, content: "r1" },
  ];
  const sessions = [...halfway.slice(0, 1), s("c0-1", "c0-0", "compression"), s("c0-1.r", "c0-1")];
  const truth = chainTruth(["c0-0", "c0-1", "c0-1.r"], sessions, new Set(["c0-1"]));
  const messages = { "c0-1": [{ id: 9, content: "r0" }], "c0-1.r": [{ id: 11, content: "r1" }] };
  deepStrictEqual(resumedViolations({ tip: "c0-1", floor: 8, acks, truth, messages }), []);
  const found = resumedViolations({ tip: "c0-1", floor: 9, acks, truth, messages });
  deepStrictEqual(found, [
    "the append through the resolved tip got id 9, not after the chain's last message (id 9)",
  ]);
  const elsewhere = resumedViolations({ tip: "c0-0", floor: 0, acks, truth, messages });
  ok(elsewhere[0]?.startsWith("a fresh process resolved c0-0 to c0-1, expected the live tip c0-0"));
});
