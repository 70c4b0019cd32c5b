// What counts as a typed refusal: an error whose name is a class of the store's own.

/** Error names that carry no meaning of the store's own. */
export const GENERIC_ERRORS: ReadonlySet<string> = new Set([
  "Error",
  "TypeError",
  "RangeError",
  "ReferenceError",
  "SyntaxError",
  "EvalError",
  "URIError",
  "AggregateError",
  "SqliteError",
]);

/** The name of the contract's refusal beside other writing processes: it changed nothing. */
export const BUSY_REFUSAL = "BusyDeadlineError";

/**
 * Makes `call` again while the store refuses it with an error named `BusyDeadlineError`
 * (the contract's refusal beside other writing processes, after its busy deadline: it
 * changed nothing), for up to `forMs`; past that, or on any other error, it throws.
 *
 * @param call The write.
 * @param forMs How long to keep making it again (default a minute).
 * @returns What the call that was not refused returned.
 */
export async function retriedWhileBusy<T>(
  call: () => T | Promise<T>,
  forMs = 60_000,
): Promise<T> {
  const started = performance.now();
  for (;;) {
    try {
      return await call();
    } catch (error) {
      const busy = error instanceof Error && error.name === BUSY_REFUSAL;
      if (!busy || performance.now() - started >= forMs) throw error;
    }
  }
}

/** What a store call returned, or what it threw. */
export interface Answer {
  threw: boolean;
  value?: unknown;
  name?: string;
  message?: string;
}

/** Calls `call` and says what it returned or threw (never throws). */
export async function answerOf(call: () => unknown): Promise<Answer> {
  try {
    const value = await call();
    return { threw: false, value: value === undefined ? null : value };
  } catch (error) {
    return {
      threw: true,
      name: error instanceof Error ? error.name : typeof error,
      message: error instanceof Error ? error.message : String(error),
    };
  }
}

/** A refusal is `false`/`null` or a typed error; `untyped` is a generic error. */
export function verdict(answer: Answer): "refused" | "untyped" | "accepted" {
  if (answer.threw) return GENERIC_ERRORS.has(answer.name ?? "") ? "untyped" : "refused";
  return answer.value === false || answer.value === null ? "refused" : "accepted";
}

/** A value a store answered as a failure message shows it: JSON, at most 200 characters. */
export function shownValue(value: unknown): string {
  let text: string;
  try {
    text = value === undefined ? "undefined" : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** The answer in words, for a failure message. */
export function describeAnswer(answer: Answer): string {
  return answer.threw
    ? `threw ${answer.name}: ${answer.message}`
    : `returned ${JSON.stringify(answer.value)}`;
}
