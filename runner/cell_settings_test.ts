import { rejects, strictEqual, throws } from "node:assert/strict";
import { checkCellSettings, checkRunSettings } from "./cell_settings.ts";
import { runCells } from "./cells.ts";

const only = (values: Record<string, string>) => (name: string) => values[name];

Deno.test("checkCellSettings: good values and unset ones pass", () => {
  checkCellSettings(only({}));
  checkCellSettings(only({
    CELLS_OPEN_DEADLINE_MS: "45000",
    CELLS_CELL_DEADLINE_MS: "1200000",
    CELLS_JUDGING_DEADLINE_MS: "600000",
    CELLS_SEED: "42",
    CELLS_SPAN: "0.25",
    CELLS_KILL_SERIES: "any",
    CELLS_RACE_SERIES: "locks",
    CELLS_CRASH_POINTS: "none",
  }));
});

Deno.test("checkCellSettings: each bad value is named with what to use", () => {
  const cases: [string, string, RegExp][] = [
    [
      "CELLS_OPEN_DEADLINE_MS",
      "soon",
      /^Invalid CELLS_OPEN_DEADLINE_MS "soon": use a whole number/,
    ],
    [
      "CELLS_CELL_DEADLINE_MS",
      "10m",
      /^Invalid CELLS_CELL_DEADLINE_MS "10m": use a whole number/,
    ],
    [
      "CELLS_JUDGING_DEADLINE_MS",
      "0",
      /^Invalid CELLS_JUDGING_DEADLINE_MS "0": use a whole number/,
    ],
    ["CELLS_SEED", "abc", /^Invalid CELLS_SEED "abc": use the seed a run reported/],
    ["CELLS_SPAN", "fast", /^Invalid CELLS_SPAN "fast": use a positive number/],
    ["CELLS_KILL_SERIES", "yes", /^Invalid CELLS_KILL_SERIES "yes": use sync, any or off/],
    ["CELLS_RACE_SERIES", "all", /^Invalid CELLS_RACE_SERIES "all": use locks or off/],
    ["CELLS_CRASH_POINTS", "off", /^Invalid CELLS_CRASH_POINTS "off": use declared or none/],
  ];
  for (const [name, value, message] of cases) {
    throws(() => checkCellSettings(only({ [name]: value })), (error: Error) => {
      return message.test(error.message);
    }, `${name}=${value}`);
  }
});

Deno.test("runCells: a bad setting in its env is refused before any cell runs", async () => {
  await rejects(
    runCells({
      target: "file:///nowhere/target.ts",
      cells: [1],
      legs: ["default"],
      libraries: [{ label: "system", path: "/nowhere/libsqlite3.so" }],
      env: { CELLS_KILL_SERIES: "yes" },
    }),
    /^Error: Invalid CELLS_KILL_SERIES "yes": use sync, any or off/,
  );
});

Deno.test("checkRunSettings: the open deadline asked for, else CELLS_OPEN_DEADLINE_MS, else 30 s", () => {
  const saved = Deno.env.get("CELLS_OPEN_DEADLINE_MS");
  try {
    Deno.env.delete("CELLS_OPEN_DEADLINE_MS");
    strictEqual(checkRunSettings(), 30_000);
    strictEqual(checkRunSettings(5000), 5000);
    Deno.env.set("CELLS_OPEN_DEADLINE_MS", "45000");
    strictEqual(checkRunSettings(), 45_000);
    Deno.env.set("CELLS_OPEN_DEADLINE_MS", "soon");
    throws(() => checkRunSettings(5000), /^RangeError: Invalid CELLS_OPEN_DEADLINE_MS "soon"/);
  } finally {
    if (saved === undefined) Deno.env.delete("CELLS_OPEN_DEADLINE_MS");
    else Deno.env.set("CELLS_OPEN_DEADLINE_MS", saved);
  }
});
