import { match, ok, rejects } from "node:assert/strict";
import { isHarnessError } from "./harness_error.ts";
import { WaitError, waitFor } from "./wait_for.ts";

/** A count that grows by one every `everyMs`, until `stopsAtMs` (if given). */
function growing(everyMs: number, stopsAtMs = Infinity): () => number {
  const started = performance.now();
  return () => Math.floor(Math.min(performance.now() - started, stopsAtMs) / everyMs);
}

Deno.test("waitFor gives up at its deadline when nothing progresses", async () => {
  const plain = /^Gave up waiting for a condition after \d+ ms$/;
  await rejects(
    waitFor(() => false, { what: "a condition", deadlineMs: 100, intervalMs: 5 }),
    (e: Error) => e instanceof WaitError && plain.test(e.message),
  );
  await rejects(
    waitFor(() => false, { what: "a condition", deadlineMs: 100, progress: () => 7 }),
    (e: Error) => e instanceof WaitError && plain.test(e.message),
  );
});

Deno.test("waitFor waits past its deadline while the work progresses", async () => {
  const count = growing(20);
  const waited = await waitFor(() => count() >= 20, {
    what: "20 acknowledgements",
    deadlineMs: 150,
    intervalMs: 5,
    progress: count,
  });
  ok(waited >= 300, `waited ${Math.round(waited)} ms`);
});

Deno.test("waitFor gives up once the work stops progressing, naming the stall", async () => {
  const count = growing(20, 200);
  await rejects(
    waitFor(() => count() >= 100, {
      what: "100 acknowledgements",
      deadlineMs: 150,
      intervalMs: 5,
      progress: count,
      observed: () => `${count()} acknowledged`,
    }),
    (e: Error) => {
      ok(e instanceof WaitError && !isHarnessError(e), e.message);
      match(e.message, /nothing progressed in the last \d+ ms\): last observed: 10 acknowledged$/);
      return true;
    },
  );
});

Deno.test("waitFor ends a wait that progresses past its limit as the suite's error", async () => {
  const count = growing(10);
  await rejects(
    waitFor(() => false, {
      what: "a slow store",
      deadlineMs: 100,
      limitMs: 300,
      intervalMs: 5,
      progress: count,
    }),
    (e: Error) => {
      ok(isHarnessError(e), e.message);
      match(e.message, /it progressed throughout: a store this slow is not judged within 300 ms/);
      return true;
    },
  );
});
