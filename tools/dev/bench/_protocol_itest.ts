// The bench's interleaving protocol (`ready`, a count per slice, `done`) on both kinds of
// append child: every step runs exactly once across the slices, the result is the usual
// one, and a child that fails mid-run is reported with its stderr, not waited on.
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendChild, type AppendOptions, type VariantKey } from "./_children.ts";
import { type LiveChild, sliceSizes } from "./_protocol.ts";
import { testFolder } from "../../../internal/_test_folder.ts";

const options = { sanitizeResources: false, sanitizeOps: false };

function hasPython(): boolean {
  try {
    return new Deno.Command("python3", { args: ["-c", "import sqlite3"] }).outputSync().success;
  } catch {
    return false;
  }
}

function job(dir: string, name: string, n: number): AppendOptions {
  return {
    path: join(dir, `${name}.db`),
    mode: "delete",
    sync: "EXTRA",
    n,
    slices: 3,
    batch: 1,
    warmup: 2,
    jitWarmup: 20, // the scratch warm-up runs too
  };
}

Deno.test("sliceSizes splits a run into near-equal parts, never an empty one", () => {
  assert.deepEqual(sliceSizes(10, 3), [4, 3, 3]);
  assert.deepEqual(sliceSizes(9, 3), [3, 3, 3]);
  assert.deepEqual(sliceSizes(2, 5), [1, 1]);
  assert.deepEqual(sliceSizes(7, 1), [7]);
});

/** Runs `body` with a fresh append child of `variant` in a temp folder, then cleans up. */
async function withChild(
  variant: VariantKey,
  body: (child: LiveChild) => Promise<void>,
): Promise<void> {
  const dir = testFolder({ prefix: "bench-test-" });
  const child = appendChild(variant, job(dir, variant, 10));
  try {
    await child.ready();
    await body(child);
  } finally {
    child.kill();
    await Deno.remove(dir, { recursive: true });
  }
}

const python = hasPython();

for (const variant of ["sessiondb", "python"] as VariantKey[]) {
  const ignore = variant === "python" && !python;

  Deno.test({
    name: `a ${variant} append child runs its appends in the slices it is asked for`,
    ignore,
    ...options,
    fn: () =>
      withChild(variant, async (child) => {
        for (const size of sliceSizes(10, 3)) {
          const seconds = await child.slice(size);
          assert.ok(seconds >= 0 && seconds < 60, `slice time ${seconds}`);
        }
        const result = await child.finish() as Record<string, unknown>;
        assert.equal(result.transactions, 10);
        assert.equal(result.messages, 10);
        assert.equal(result.journalMode, "delete");
        assert.equal(result.synchronous, "EXTRA");
      }),
  });

  Deno.test({
    name: `a ${variant} append child that fails mid-run is reported with its stderr`,
    ignore,
    ...options,
    // A slice of zero steps is a protocol error: the child must exit and say why.
    fn: () =>
      withChild(
        variant,
        (child) =>
          assert.rejects(child.slice(0), /ended before a slice of 0: .*bad slice request/s),
      ),
  });
}
