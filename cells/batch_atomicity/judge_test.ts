// Cell 9's judge on hand-made states: no processes, no store.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type BatchEntry, batchOf, memberOf } from "./batches.ts";
import { type BatchRead, judgeBatches } from "./judge.ts";

type Row = { id: number; role: string; content: string };

/** Rows of batch b of w0 under ids from `first`. */
function rowsOf(b: number, first: number): { session: string; rows: Row[] } {
  const { session, messages } = batchOf("w0", b);
  return {
    session,
    rows: messages.map((m, j) => ({ id: first + j, role: m.role, content: m.content })),
  };
}

function read(...batches: { session: string; rows: Row[] }[]): BatchRead {
  const rows: Record<string, Row[]> = {};
  for (const { session, rows: some } of batches) {
    rows[session] = [...(rows[session] ?? []), ...some];
  }
  for (const list of Object.values(rows)) list.sort((a, b) => a.id - b.id);
  const counts = Object.fromEntries(Object.entries(rows).map(([s, r]) => [s, r.length]));
  return { rows, counts };
}

function journal(...acked: { b: number; ids: number[] }[]): BatchEntry[] {
  return acked.flatMap(({ b, ids }, i) => [
    {
      k: "inv",
      w: "w0",
      b,
      s: batchOf("w0", b).session,
      n: batchOf("w0", b).messages.length,
      t0: 2 * i,
    },
    { k: "ack", w: "w0", b, ids, t1: 2 * i + 1 },
  ]);
}

const ids = (first: number, n: number) => Array.from({ length: n }, (_, j) => first + j);

function failing(state: Parameters<typeof judgeBatches>[0]): string[] {
  return judgeBatches(state).checks
    .filter((c) => c.violations.length || c.missing.length)
    .map((c) => `${c.name}: ${[...c.violations, ...c.missing].join("; ")}`);
}

Deno.test("batches: sizes vary from 1 to 20 and contents name their place", () => {
  const sizes = new Set(Array.from({ length: 20 }, (_, b) => batchOf("w0", b).messages.length));
  deepStrictEqual(sizes.size, 20);
  deepStrictEqual(memberOf("wa:b12.3/7"), { w: "wa", b: 12, j: 3, n: 7 });
  deepStrictEqual(memberOf("m3"), undefined);
});

Deno.test("judge: whole acknowledged batches pass", () => {
  const state = read(rowsOf(0, 1), rowsOf(1, 7));
  const journals = [journal({ b: 0, ids: ids(1, 6) }, { b: 1, ids: ids(7, 13) })];
  deepStrictEqual(failing({ passes: [state, state], journals, soundness: [] }), []);
});

Deno.test("judge: a lost acknowledged batch and a partial one", () => {
  const partial = rowsOf(1, 7);
  partial.rows = partial.rows.slice(0, 4);
  const state = read(rowsOf(0, 1), partial);
  const journals = [journal({ b: 0, ids: ids(1, 6) }, { b: 1, ids: ids(7, 13) })];
  const found = failing({ passes: [state, state], journals, soundness: [] });
  ok(found[0]?.startsWith("every acknowledged batch wholly present: 2 acknowledged: 1"), found[0]);
  ok(found[1]?.includes("w0:b1 is partial: 4 of 13 messages"), found[1]);
});

Deno.test("judge: another message between a batch's ids, and a batch before an acknowledged id", () => {
  const first = rowsOf(0, 1);
  first.rows[5]!.id = 100; // the batch's last message after batch 1's
  const state = read(first, rowsOf(1, 7));
  const journals = [journal({ b: 0, ids: first.rows.map((r) => r.id) }, { b: 1, ids: ids(7, 13) })];
  const found = failing({ passes: [state, state], journals, soundness: [] });
  ok(found.some((f) => f.includes("w0:b0: 13 other message(s) between")), found.join("\n"));
  ok(
    found.some((f) => f.includes("w0:b1 starts at id 7, not after w0:b0's id 100")),
    found.join("\n"),
  );
});

Deno.test("judge: a stale messageCount, a duplicate, two passes that differ", () => {
  const state = read(rowsOf(0, 1));
  const stale = { ...state, counts: { [rowsOf(0, 1).session]: 2 } };
  const found = failing({
    passes: [stale, state],
    journals: [journal({ b: 0, ids: ids(1, 6) })],
    soundness: ["two recovery passes differ"],
  });
  ok(
    found.some((f) =>
      f.startsWith("messageCount equals the active rows: w0-s0: messageCount 2, 6 rows")
    ),
  );
  ok(found.some((f) => f.startsWith("recovery deterministic")));
  const dup = rowsOf(0, 1);
  dup.rows.push({ id: 7, role: dup.rows[0]!.role, content: dup.rows[0]!.content });
  const twice = read(dup);
  const again = failing({
    passes: [twice, twice],
    journals: [journal({ b: 0, ids: ids(1, 6) })],
    soundness: [],
  });
  ok(again.some((f) => f.includes("w0:b0.0/6 duplicated (id 7)")), again.join("\n"));
});

Deno.test("judge: a batch present but never invoked, and an unacknowledged one that landed", () => {
  const state = read(rowsOf(0, 1), rowsOf(1, 7));
  const invokedOnly: BatchEntry[] = [
    ...journal({ b: 0, ids: ids(1, 6) }),
    { k: "inv", w: "w0", b: 1, s: "w0-s1", n: 13, t0: 9 },
  ];
  deepStrictEqual(failing({ passes: [state, state], journals: [invokedOnly], soundness: [] }), []);
  const found = failing({
    passes: [state, state],
    journals: [journal({ b: 0, ids: ids(1, 6) })],
    soundness: [],
  });
  ok(found.some((f) => f.includes("w0:b1 is present but was never invoked")), found.join("\n"));
});

Deno.test("judge: a batch's text read back cut is changed, nothing else", () => {
  const cut = rowsOf(0, 1);
  // w0:b0.5/6 goes on after a NUL; a binding that takes text as a C string stops there.
  cut.rows[5]!.content = cut.rows[5]!.content.split("\0")[0]!;
  const state = read(cut);
  const found = failing({
    passes: [state, state],
    journals: [journal({ b: 0, ids: ids(1, 6) })],
    soundness: [],
  });
  deepStrictEqual(found, [
    'every text kept as written (UTF-8, line breaks, a NUL): 1 message(s) changed, first: w0:b0.5/6 (an embedded NUL) read back as 9 characters where 21 were written, different from character 9: "0:b0.5/6" for "0:b0.5/6\\u0000after a NUL"',
  ]);
});

Deno.test("judge: a batch member read back in another role is changed, nothing else", () => {
  const collapsed = rowsOf(0, 1);
  deepStrictEqual(collapsed.rows.map((row) => row.role).slice(0, 5), [
    "user",
    "assistant",
    "tool",
    "system",
    "user",
  ]);
  // A store that keeps every message as the user's.
  for (const row of collapsed.rows) row.role = "user";
  const state = read(collapsed);
  const found = failing({
    passes: [state, state],
    journals: [journal({ b: 0, ids: ids(1, 6) })],
    soundness: [],
  });
  deepStrictEqual(found, [
    'every role kept as written (system, user, assistant, tool): 4 message(s) in another role, first: w0:b0.1/6 read back as "user", written as "assistant"',
  ]);
});

Deno.test("judge: a batch written again plain after a typed refusal is kept, not changed", () => {
  const plain = rowsOf(0, 1);
  plain.rows = batchOf("w0", 0, true).messages.map((m, j) => ({
    id: plain.rows[j]!.id,
    role: m.role,
    content: m.content,
  }));
  const state = read(plain);
  const found = failing({
    passes: [state, state],
    journals: [journal({ b: 0, ids: ids(1, 6) })],
    soundness: [],
  });
  deepStrictEqual(found, []);
  strictEqual(plain.rows[5]!.content, "w0:b0.5/6 (text refused)");
});
