import { deepStrictEqual, notDeepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { runSeed, seededRandom } from "./seeded_random.ts";

Deno.test("a seed replays the same choices, another seed gives others", () => {
  const draw = (seed: number) => Array.from({ length: 8 }, seededRandom(seed));
  deepStrictEqual(draw(42), draw(42));
  notDeepStrictEqual(draw(42), draw(43));
  ok(draw(7).every((x) => x >= 0 && x < 1));
});

Deno.test("runSeed takes the option, else CELLS_SEED, else draws one", () => {
  strictEqual(runSeed(5), 5);
  const saved = Deno.env.get("CELLS_SEED");
  try {
    Deno.env.set("CELLS_SEED", "1234");
    strictEqual(runSeed(), 1234);
    Deno.env.delete("CELLS_SEED");
    ok(Number.isInteger(runSeed()));
    Deno.env.set("CELLS_SEED", "");
    ok(Number.isInteger(runSeed()));
    // A replay asked for must not quietly draw fresh choices.
    for (const bad of ["abc", "-1", "1.5", "2147483648", "0x10"]) {
      Deno.env.set("CELLS_SEED", bad);
      throws(
        () => runSeed(),
        new RegExp(
          `^RangeError: Invalid CELLS_SEED "${
            bad.replace(".", "\\.")
          }": use the seed a run reported`,
        ),
      );
    }
    strictEqual(runSeed(9), 9);
  } finally {
    if (saved === undefined) Deno.env.delete("CELLS_SEED");
    else Deno.env.set("CELLS_SEED", saved);
  }
});
