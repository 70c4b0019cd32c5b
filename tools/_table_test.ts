import { ok, strictEqual } from "node:assert/strict";
import { renderTable, type TableRow, terminalWidth } from "./_table.ts";

const row = (cell: number, status: string, extra: Partial<TableRow> = {}): TableRow => ({
  clause: `${cell} prefix durability`,
  cell,
  tier: "cells",
  leg: "default",
  library: "system",
  sqliteVersion: "3.40.1",
  status,
  ...extra,
});

Deno.test("table: a wide FAIL fits 120 columns and is followed by its checks, cause, fix, replay, evidence", () => {
  const long = "lost m7: acknowledged at 12:00:01 but absent after recovery; ".repeat(12);
  const text = renderTable([
    row(1, "PASS", { figures: { acknowledged: 650, recovered: 651, sigkills: 4 } }),
    row(3, "FAIL", {
      clause: "3 rotation atomicity",
      reason: `Failed check(s):\n${long}\nsecond: ${long}`,
      checks: [`orphan query: ${long}`, `second: ${long}`],
      diagnoses: [{ pattern: "p", cause: `two transactions ${long}`, fix: "publish in one" }],
      replay: "deno task matrix --target file:///x/t.ts --cells 3 --legs default --seed 7",
      evidence: "/work/.cache/evidence/cell3-abc",
    }),
  ], { width: 120 });
  const lines = text.split("\n");
  const replay = lines.findIndex((l) => l.startsWith("  replay: "));
  for (const line of lines.filter((l) => !/^ {2}(replay|evidence): /.test(l))) {
    ok(line.length <= 120, `a line of ${line.length} columns: ${line}`);
  }
  const block = lines.findIndex((l) =>
    l.startsWith("FAIL 3 rotation atomicity × default × system")
  );
  ok(block > 0, text);
  ok(
    lines[block + 1]!.startsWith("  check: orphan query: lost m7") &&
      lines[block + 1]!.endsWith("…"),
  );
  ok(lines[block + 2]!.startsWith("  check: second: "), text);
  ok(lines[block + 3]!.startsWith("  cause: two transactions"), text);
  strictEqual(lines[block + 4], "  fix: publish in one");
  strictEqual(replay, block + 5);
  strictEqual(lines[block + 6], "  evidence: /work/.cache/evidence/cell3-abc");
  // The FAIL row's detail is its first check, cut with an ellipsis.
  const failRow = lines.find((l) => l.startsWith("3 rotation atomicity") && l.includes("FAIL"))!;
  ok(failRow.endsWith("…") && failRow.length === 120, failRow);
});

Deno.test("table: identical SKIPs are one line; different reasons stay apart", () => {
  const why = "leg wal not honoured: the writer ran in another mode on SQLite 3.40.1";
  const rows = [1, 2, 3, 4, 5, 6, 7].map((cell) =>
    row(cell, "SKIP", { leg: "wal", reason: why, clause: `${cell} c` })
  );
  rows.push(row(2, "SKIP", { leg: "delete", reason: "default leg only: one predicated UPDATE" }));
  rows.push(
    row(2, "SKIP", {
      leg: "wal",
      library: "fixed",
      reason: "default leg only: one predicated UPDATE",
    }),
  );
  const lines = renderTable(rows, { width: 120 }).split("\n");
  strictEqual(lines.length, 2, lines.join("\n"));
  strictEqual(lines[0], `7 cells × wal × system: SKIP: ${why}`);
  strictEqual(
    lines[1],
    "cell 2 × delete,wal × system,fixed: SKIP: default leg only: one predicated UPDATE",
  );
});

Deno.test("table: 120 columns when stdout is not a terminal", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { terminalWidth } from ${
        JSON.stringify(new URL("./_table.ts", import.meta.url).href)
      };` +
      "console.log(terminalWidth());",
    ],
    stdout: "piped",
  }).output();
  strictEqual(new TextDecoder().decode(out.stdout).trim(), "120");
  ok(terminalWidth() >= 40);
});
