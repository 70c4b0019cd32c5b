// Cell 5's delivery policies and its judge, on made-up outcomes: the origin's figures, the
// policy a store's answers imply, and each violation the judge must name.
import { deepStrictEqual, match, ok, rejects, strictEqual } from "node:assert/strict";
import {
  choosePolicy,
  copiesGap,
  declaredPolicy,
  expectedCopies,
  impliedPolicy,
  type ObligationHistory,
  terminalStates,
} from "./delivery_policy.ts";
import type { Arrival } from "./inbox.ts";
import { claimsCheck } from "./judge.ts";
import { judgeOutbox, type RecoveredOutbox, senderAtKill } from "./state.ts";
import { TargetError } from "../contract/target.ts";
import { obligationContent } from "./_content.ts";

const copies = (h: ObligationHistory, policy: Parameters<typeof expectedCopies>[1]) => {
  const c = expectedCopies(h, policy);
  return [c.unmarked, c.marked];
};

Deno.test("expected copies: the origin's figures under marked-at-least-once, none resent under at-most-once", () => {
  const kinds = ["delivered", "pending", "attempting", "sent"] as const;
  const marked = kinds.map((kind) => copies({ content: "c", kind }, "marked-at-least-once"));
  deepStrictEqual(marked, [[1, 0], [1, 0], [0, 1], [1, 1]]);
  const amo = kinds.map((kind) => copies({ content: "c", kind }, "at-most-once"));
  deepStrictEqual(amo, [[1, 0], [1, 0], [0, 0], [1, 0]]);
  // A boot killed inside its redelivery: one more marked copy, or a plain one made maybe-sent.
  const killed = (kind: "pending" | "attempting" | "sent") => ({
    content: "c",
    kind,
    killedBootSent: true,
  });
  deepStrictEqual(copies(killed("sent"), "marked-at-least-once"), [1, 2]);
  deepStrictEqual(copies(killed("attempting"), "marked-at-least-once"), [0, 2]);
  deepStrictEqual(copies(killed("pending"), "marked-at-least-once"), [1, 1]);
  deepStrictEqual(copies(killed("pending"), "at-most-once"), [1, 0]);
});

Deno.test("terminal states: abandoned only where the policy allows it, maybe-sent settled under at-most-once", () => {
  deepStrictEqual(terminalStates({ content: "c", kind: "sent" }, "marked-at-least-once"), [
    "delivered",
    "abandoned",
  ]);
  deepStrictEqual(terminalStates({ content: "c", kind: "sent" }, "at-most-once"), [
    "unknown",
    "failed",
    "abandoned",
  ]);
  deepStrictEqual(terminalStates({ content: "c", kind: "pending" }, "at-most-once"), ["delivered"]);
});

Deno.test("the policy a store's answers imply, and a declaration over it", () => {
  strictEqual(
    impliedPolicy([{ action: "resend", maybeSent: true }]).policy,
    "marked-at-least-once",
  );
  strictEqual(impliedPolicy([{ action: "unknown", maybeSent: true }]).policy, "at-most-once");
  // A resend of a never-attempted obligation says nothing about the policy.
  strictEqual(impliedPolicy([{ action: "resend", maybeSent: false }]).policy, "at-most-once");
  match(impliedPolicy([]).why, /no sweep met a maybe-sent obligation/);
  const declared = choosePolicy("marked-at-least-once", [{ action: "unknown", maybeSent: true }]);
  deepStrictEqual([declared.policy, declared.declared], ["marked-at-least-once", true]);
});

Deno.test("a declared policy that is not one is the target's error, with the fix", async () => {
  const target = (body: string) =>
    `data:application/typescript,${
      encodeURIComponent(`export function openStore() { return {}; }\n${body}`)
    }`;
  strictEqual(await declaredPolicy(target("")), undefined);
  strictEqual(
    await declaredPolicy(target('export const deliveryPolicy = () => "marked-at-least-once";')),
    "marked-at-least-once",
  );
  await rejects(
    () => declaredPolicy(target('export const deliveryPolicy = "exactly-once";')),
    (error: Error) =>
      error instanceof TargetError &&
      /^Invalid deliveryPolicy "exactly-once" in target module .*: use "at-most-once" or "marked-at-least-once", or declare none$/
        .test(error.message),
  );
});

Deno.test("copiesGap names what is wrong in a reader's words", () => {
  const gap = (
    u: number,
    m: number,
    eu: number,
    em: number,
    p: "at-most-once" | "marked-at-least-once",
  ) => copiesGap({ unmarked: u, marked: m }, { unmarked: eu, marked: em }, p);
  match(gap(2, 0, 1, 1, "marked-at-least-once"), /an unmarked duplicate, a marked resend missing/);
  match(gap(0, 0, 0, 1, "marked-at-least-once"), /never reached the platform \(a reply lost\)/);
  match(gap(1, 0, 0, 1, "marked-at-least-once"), /a resend that is not marked/);
  match(gap(1, 0, 0, 0, "at-most-once"), /sent again \(at-most-once never resends\)/);
  match(gap(2, 0, 1, 0, "at-most-once"), /more than once/);
});

/** Obligation `i`'s content as the sender records it. */
const effect = (i: number) => obligationContent("effect", i);

/** A judged file made up: obligations `o<i>` with these contents and states. */
function file(rows: [string, string, string | null][]): RecoveredOutbox {
  return {
    obligations: rows.map(([content, state, lastError], i) => ({
      obligationId: `o${i}`,
      content,
      state,
      deliveryFence: 1,
      lastError,
    })),
    invariants: [],
  };
}

const arrival = (i: number, content: string, marker: string | null = null): Arrival => ({
  key: `o${i}`,
  obligationId: `o${i}`,
  content: `${marker ?? ""}${content}`,
  marker,
  pid: 1,
});

async function judged(
  read: RecoveredOutbox,
  arrivals: Arrival[],
  policy: "at-most-once" | "marked-at-least-once",
  idempotent = false,
) {
  const sender = senderAtKill("sender:afterSend", 3);
  const out = await judgeOutbox({
    target: "unused",
    db: "unused",
    arrivals,
    idempotent,
    policy,
    histories: sender.histories,
    reads: [read, read],
    sound: [],
  });
  return Object.fromEntries(
    out.checks.map((c) => [c.name.split(" under")[0], c.violations]),
  ) as Record<string, string[]>;
}

Deno.test("judgeOutbox: sent-unacked under marked-at-least-once wants (1,1), and names an unmarked duplicate", async () => {
  const read = file([
    [effect(0), "delivered", null],
    [effect(1), "delivered", null],
    [effect(2), "abandoned", "gave up after the resend"],
  ]);
  const base = [arrival(0, effect(0)), arrival(1, effect(1)), arrival(2, effect(2))];
  const good = await judged(
    read,
    [...base, arrival(2, effect(2), "[again] ")],
    "marked-at-least-once",
  );
  ok(Object.values(good).every((v) => v.length === 0), JSON.stringify(good));
  const bad = await judged(read, [...base, arrival(2, effect(2))], "marked-at-least-once");
  match(
    bad["copies per obligation (unmarked, marked)"]![0]!,
    /"effect 2" \(sent and not booked\): \(2,0\) .*an unmarked duplicate/,
  );
});

Deno.test("judgeOutbox: a reason for every settled end, the recorded content on every copy, no stray copy", async () => {
  const read = file([
    [effect(0), "delivered", null],
    [effect(1), "delivered", null],
    [effect(2), "unknown", " "],
  ]);
  const out = await judged(read, [
    arrival(0, effect(0)),
    { ...arrival(1, effect(1)), content: "effect one" },
    arrival(2, effect(2)),
    { ...arrival(7, effect(7)) },
  ], "at-most-once");
  match(out["every obligation ends terminal"]![0]!, /"effect 2" .* ended unknown without a reason/);
  match(
    out["each copy carries the recorded content"]![0]!,
    /as "effect one", not "effect 1 é 漢字 🦕"/,
  );
  match(
    out["copies per obligation (unmarked, marked)"]!.at(-1)!,
    /an obligation the file does not hold/,
  );
});

Deno.test("judgeOutbox: the idempotent transport wants exactly one after dedupe, and delivered", async () => {
  const read = file([
    [effect(0), "delivered", null],
    [effect(1), "delivered", null],
    [effect(2), "unknown", "maybe sent"],
  ]);
  const out = await judged(
    read,
    [
      arrival(0, effect(0)),
      arrival(1, effect(1)),
      arrival(1, effect(1)),
    ],
    "at-most-once",
    true,
  );
  match(
    out["every obligation delivered exactly once after dedupe by key"]![0]!,
    /"effect 2" .* 0 time\(s\)/,
  );
  match(
    out["every obligation ends terminal"]![0]!,
    /"effect 2" .* ended unknown .*expected delivered/,
  );
});

Deno.test("claimsCheck: disjoint, and together exactly the owed set", () => {
  const content = (id: string) => ({ a: "effect 0", b: "effect 1", c: "effect 2" })[id];
  const check = claimsCheck(
    "claims",
    [
      { name: "r0", claims: [{ id: "a", action: "send" }] },
      { name: "r1", claims: [{ id: "a", action: "send" }, { id: "c", action: "send" }] },
    ],
    { owed: ["effect 0", "effect 1"], contentOf: content },
  );
  deepStrictEqual(check.violations, [
    '"effect 0" claimed by 2 concurrent sweeps (r0: send; r1: send): they must be disjoint',
    'owed and not claimed: "effect 1"',
    'claimed and not owed: "effect 2"',
    "r0 claimed 1, r1 claimed 2: a sweep takes every owed obligation it sees, in one transaction, so the first to commit left behind what the others took",
  ]);
});
