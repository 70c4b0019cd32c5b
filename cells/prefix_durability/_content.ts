// The texts cell 1's writer appends: `m<i>` first (the transcript's order), then, in turn,
// what real transcripts hold and stores written elsewhere fail to keep byte for byte:
// multi-byte UTF-8 (a 4-byte character is a surrogate pair in JavaScript), line breaks,
// quotes and separators (a line-based or hand-escaped format), an embedded NUL (text bound
// as a C string), trailing white space (a store that trims) and, once every 32 messages, a
// tool output past 64 KiB (a column or a line reader limited to 65,535 bytes).
import { shownValue } from "../contract/typed.ts";

/** A text past 64 KiB, the size of a long tool output. */
const LONG = "0123456789abcdef".repeat(4_608);

/** What follows `m<i>` in the texts beyond it, by `i % 8`, and what each is. */
const TAILS: Readonly<Record<number, { tail: string; kind: string }>> = {
  1: { tail: " é 漢字 🦕", kind: "multi-byte UTF-8" },
  3: { tail: "\nsecond line\r\n\t\"quoted\" 'single' \\ ,;|", kind: "line breaks and quotes" },
  5: { tail: "\u0000after a NUL", kind: "an embedded NUL" },
  6: { tail: " \t ", kind: "trailing white space" },
};

/** What follows `m<i>` in the writer's `i`-th text, and what it is; none for `m<i>` alone. */
function tailOf(i: number): { tail: string; kind: string } | undefined {
  return i % 32 === 7 ? { tail: ` ${LONG}`, kind: "72 KiB" } : TAILS[i % 8];
}

/**
 * The text of the writer's `i`-th append.
 *
 * @param i The append's index in the transcript, from 0.
 * @returns `m<i>`, alone or followed by one of the kinds of text a store must keep as written.
 */
export function prefixContent(i: number): string {
  return `m${i}${tailOf(i)?.tail ?? ""}`;
}

/** What the writer's `i`-th text holds beyond `m<i>` ("an embedded NUL"), for a message. */
export function prefixKind(i: number): string {
  return tailOf(i)?.kind ?? "nothing more";
}

/** The `m<i>` a text read back starts with (which append it is), or `undefined`. */
export function prefixName(content: unknown): string | undefined {
  return typeof content === "string" ? /^m\d+/.exec(content)?.[0] : undefined;
}

/**
 * Where a restarted writer goes on: after the last message the store recovered (by the
 * `m<i>` it starts with; a text the store refused leaves its index out), from 0 when none.
 *
 * @param messages The recovered messages, in order.
 * @returns The index of the next append.
 */
export function resumeIndex(messages: readonly { content: unknown }[]): number {
  const last = prefixName(messages.at(-1)?.content);
  return last === undefined ? messages.length : Number(last.slice(1)) + 1;
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
