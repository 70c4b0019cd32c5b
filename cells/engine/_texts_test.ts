import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { writtenOrPlain } from "./_texts.ts";

/** An error of a store's own class. */
function refusal(name: string): Error {
  const error = new Error(`refused (${name})`);
  error.name = name;
  return error;
}

/** A write that throws `errors` in turn, then answers which texts it wrote; calls in `calls`. */
function store(errors: Error[], calls: boolean[]) {
  return (plain: boolean) => {
    calls.push(plain);
    const error = errors.shift();
    if (error) throw error;
    return plain ? "plain" : "meant";
  };
}

Deno.test("writtenOrPlain: a busy refusal makes the same write again, never the plain one", async () => {
  const calls: boolean[] = [];
  const busy = () => refusal("BusyDeadlineError");
  strictEqual(await writtenOrPlain(store([busy(), busy()], calls)), "meant");
  deepStrictEqual(calls, [false, false, false]);
  // Refused plain, then busy: the plain write again.
  const after: boolean[] = [];
  strictEqual(
    await writtenOrPlain(store([refusal("TextRefusedError"), busy()], after)),
    "plain",
  );
  deepStrictEqual(after, [false, true, true]);
});

Deno.test("writtenOrPlain: with no plain texts of its own, a typed refusal is thrown", async () => {
  const calls: boolean[] = [];
  await rejects(
    writtenOrPlain(store([refusal("TextRefusedError")], calls), { plain: false }),
    { name: "TextRefusedError" },
  );
  deepStrictEqual(calls, [false]);
});
