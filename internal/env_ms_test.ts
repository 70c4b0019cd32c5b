import { strictEqual, throws } from "node:assert/strict";
import { envMilliseconds } from "./env_ms.ts";

const NAME = "CELLS_ENV_MS_TEST";

function withValue(value: string | undefined, fn: () => void): void {
  if (value === undefined) Deno.env.delete(NAME);
  else Deno.env.set(NAME, value);
  try {
    fn();
  } finally {
    Deno.env.delete(NAME);
  }
}

Deno.test("envMilliseconds: unset or empty is the fallback; a whole number above 0 is itself", () => {
  withValue(undefined, () => strictEqual(envMilliseconds(NAME, 30_000), 30_000));
  withValue(" ", () => strictEqual(envMilliseconds(NAME, 30_000), 30_000));
  withValue("1500", () => strictEqual(envMilliseconds(NAME, 30_000), 1500));
});

Deno.test("envMilliseconds: anything else is refused, naming the variable and what to use", () => {
  for (const bad of ["soon", "0", "-5", "1.5", "1e400", "NaN"]) {
    withValue(bad, () =>
      throws(
        () => envMilliseconds(NAME, 30_000),
        (error: Error) =>
          error instanceof RangeError &&
          error.message ===
            `Invalid ${NAME} "${bad}": use a whole number of milliseconds above 0, or unset it`,
      ));
  }
});
