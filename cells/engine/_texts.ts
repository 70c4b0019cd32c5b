// The texts the cells' writers append beyond the name that says which append it is: what real
// transcripts hold and stores written elsewhere fail to keep byte for byte. Multi-byte UTF-8
// (a 4-byte character is a surrogate pair in JavaScript), line breaks, quotes and separators
// (a line-based or hand-escaped format), an embedded NUL (text bound as a C string), trailing
// white space (a store that trims), and a tool output past 64 KiB (a column or a line reader
// limited to 65,535 bytes).
import { BUSY_REFUSAL, GENERIC_ERRORS, retriedWhileBusy, shownValue } from "../contract/typed.ts";

/** A text that follows a name, and what it is. */
export interface TextTail {
  /** The text. */
  tail: string;
  /** What it holds, for a message ("an embedded NUL"). */
  kind: string;
}

/** The tails in turn, by `k % 8`; the other turns have none. */
const TAILS: Readonly<Record<number, TextTail>> = {
  1: { tail: " é 漢字 🦕", kind: "multi-byte UTF-8" },
  3: { tail: "\nsecond line\r\n\t\"quoted\" 'single' \\ ,;|", kind: "line breaks and quotes" },
  5: { tail: "\u0000after a NUL", kind: "an embedded NUL" },
  6: { tail: " \t ", kind: "trailing white space" },
};

/** A text past 64 KiB, the size of a long tool output. */
export const LONG_TAIL: TextTail = {
  tail: ` ${"0123456789abcdef".repeat(4_608)}`,
  kind: "72 KiB",
};

/** The tail of turn `k` (by `k % 8`), or `undefined` for a name alone. */
export function textTail(k: number): TextTail | undefined {
  return TAILS[k % 8];
}

/** The text `name` followed by `tail`'s text (the name alone without one). */
export function namedText(name: string, tail: TextTail | undefined): string {
  return `${name}${tail?.tail ?? ""}`;
}

/**
 * What a writer writes instead of `name`'s text when the store refused that text with an error
 * of its own class (the contract allows it): the name and a note that no store cutting or
 * trimming the text can produce, so a judge tells a refusal taken from a text changed.
 */
export function refusedText(name: string): string {
  return `${name} (text refused)`;
}

/**
 * Writes with the texts meant (`write(false)`), and again plain (`write(true)`) when the
 * store refuses them with an error of its own class; an untyped refusal is thrown. A
 * refusal named `BusyDeadlineError` (the contract's, beside other writing processes: it
 * changed nothing) makes the same write again, for up to a minute
 * ({@linkcode retriedWhileBusy}).
 *
 * @param write The write, given whether to write the plain texts.
 * @param options `plain: false` when the plain texts are the ones meant: a typed refusal is
 * then thrown.
 * @returns What the write that succeeded returned.
 */
export async function writtenOrPlain<T>(
  write: (plain: boolean) => T | Promise<T>,
  options: { plain?: boolean } = {},
): Promise<T> {
  try {
    return await retriedWhileBusy(() => write(false));
  } catch (error) {
    const name = error instanceof Error ? error.name : typeof error;
    if (name === BUSY_REFUSAL || options.plain === false || GENERIC_ERRORS.has(name)) throw error;
    return await retriedWhileBusy(() => write(true));
  }
}

/** What a text holds beyond its name ("an embedded NUL"), for a message; "nothing more" alone. */
export function textKind(tail: TextTail | undefined): string {
  return tail?.kind ?? "nothing more";
}

/**
 * How a text read back differs from the one written for `name` (`name` and `tail`'s text):
 * `undefined` when it is that text, or the plain one written after a typed refusal
 * ({@linkcode refusedText}); else the name, what its text holds and the first difference.
 *
 * @param read What the store answered.
 * @param name The name the text starts with (which write it is).
 * @param tail What followed the name.
 * @returns The difference in words, or `undefined`.
 */
export function textChange(
  read: unknown,
  name: string,
  tail: TextTail | undefined,
): string | undefined {
  const written = namedText(name, tail);
  if (read === written || (tail && read === refusedText(name))) return undefined;
  return `${name} (${textKind(tail)}) ${textDifference(read, written)}`;
}

/**
 * How the text read back differs from the text written: their lengths and the first
 * character that differs, with a little of each around it.
 *
 * @param read What the store answered.
 * @param written What was appended.
 * @returns The difference in words.
 */
export function textDifference(read: unknown, written: string): string {
  if (typeof read !== "string") return `read back as ${shownValue(read)}`;
  let at = 0;
  while (at < read.length && at < written.length && read[at] === written[at]) at++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 8), at + 16));
  return `read back as ${read.length} characters where ${written.length} were written, ` +
    `different from character ${at}: ${around(read)} for ${around(written)}`;
}
