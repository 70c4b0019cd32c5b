// The bench's verdicts: a durable-append ratio against Python passes at parity only
// within the A/A control's resolution, and never below 0.97x.
import assert from "node:assert/strict";
import {
  pairRatio,
  PARITY_PASS,
  resolution,
  spread,
  verdict,
  withinResolution,
} from "./_statistics.ts";

const wide = { ratio: 0.996, spread: 0.03 };
const narrow = { ratio: 1.0, spread: 0.01 };

Deno.test("a durable-append ratio of 0.96x fails, whatever the A/A control reads", () => {
  assert.equal(verdict([["Py", 0.96, 1.0, wide]]), "FAIL (Py)");
  assert.equal(verdict([["Py", 0.96, 1.0, { ratio: 0.9, spread: 0.2 }]]), "FAIL (Py)");
  assert.equal(withinResolution(0.96, { ratio: 0.9, spread: 0.2 }), false);
});

Deno.test("0.975x fails when the A/A control reads 1.00x with a spread of 0.01", () => {
  assert.equal(verdict([["Py", 0.975, 1.0, narrow]]), "FAIL (Py)");
});

Deno.test("0.98x is parity within resolution when the A/A control reads 0.996x, spread 0.03", () => {
  assert.equal(verdict([["Py", 0.98, 1.0, wide]]), PARITY_PASS);
  assert.equal(PARITY_PASS, "PASS (parity within resolution)");
  // With a miss elsewhere in the row the row still fails, naming only that target.
  assert.equal(verdict([["Py", 0.98, 1.0, wide], ["node", 0.85, 0.9]]), "FAIL (node)");
});

Deno.test("a ratio at or above its target stays a plain PASS", () => {
  assert.equal(verdict([["Py", 1.0, 1.0, narrow], ["node", 0.95, 0.9]]), "PASS");
  assert.equal(verdict([["Py", 1.04, 1.0, wide]]), "PASS");
});

Deno.test("without an A/A control a ratio below its target fails", () => {
  assert.equal(verdict([["Py", 0.99, 1.0]]), "FAIL (Py)");
  assert.equal(verdict([["Py", undefined, 1.0], ["node", undefined, 0.9]]), "-");
});

Deno.test("with one round the A/A control's ratio alone is the bound", () => {
  const once = resolution([990], [1000])!;
  assert.equal(once.spread, undefined);
  assert.equal(verdict([["Py", 0.985, 1.0, once]]), "FAIL (Py)");
  assert.equal(verdict([["Py", 0.99, 1.0, once]]), PARITY_PASS);
});

Deno.test("the A/A resolution is the median and spread of the per-round ratios", () => {
  // Rates drift 20% between rounds; the per-round ratios only 0.98-1.02.
  const control = [980, 1224, 1010];
  const python = [1000, 1200, 1000];
  const r = resolution(control, python)!;
  assert.ok(Math.abs(r.ratio - 1.01) < 1e-9, `ratio ${r.ratio}`);
  assert.ok(Math.abs(r.spread! - 0.04 / 1.01) < 1e-9, `spread ${r.spread}`);
  assert.ok(spread(python)! > 0.19);
  assert.equal(pairRatio([2, 4], [1, 2]), 2);
  assert.equal(resolution(undefined, python), undefined);
});
