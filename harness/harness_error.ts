/**
 * The suite could not exercise what it planned: a kill that did not land (the child
 * finished, or exited before the instant), a plan that no longer matches what the run
 * really did, a barrier nobody reached. It is never a verdict on the store: a cell that
 * ends with one reports `ERROR`, not `FAIL`, and it is never counted as a mutant caught.
 *
 * @example
 * ```ts
 * import { HarnessError, isHarnessError } from "./harness_error.ts";
 * const error = new HarnessError("Cannot kill the child at sync call 3: it finished first");
 * console.log(isHarnessError(error), isHarnessError(new Error("lost m7"))); // true false
 * ```
 */
export class HarnessError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "HarnessError";
  }
}

/**
 * Whether `error` (or an error in its `cause` chain) is a {@linkcode HarnessError}.
 *
 * @param error Anything thrown.
 * @returns `true` when the suite, not the store, failed.
 * @example
 * ```ts
 * import { HarnessError, isHarnessError } from "./harness_error.ts";
 * const wrapped = new Error("step 3", { cause: new HarnessError("no kill landed") });
 * console.log(isHarnessError(wrapped)); // true
 * ```
 */
export function isHarnessError(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof HarnessError || e.name === "HarnessError") return true;
  }
  return false;
}
