// The messages cell 1's writer appends: `m<i>` first (the transcript's order), alone or
// followed, in turn, by a text a store must keep as written (`../engine/_texts.ts`); every 32nd
// by a tool output past 64 KiB; the contract's four roles in turn.
import type { CellMessage } from "../contract/target.ts";
import { turnRole } from "../engine/_roles.ts";
import { LONG_TAIL, namedText, textKind, type TextTail, textTail } from "../engine/_texts.ts";

/** What follows `m<i>` in the writer's `i`-th text, and what it is; none for `m<i>` alone. */
function tailOf(i: number): TextTail | undefined {
  return i % 32 === 7 ? LONG_TAIL : textTail(i);
}

/**
 * The text of the writer's `i`-th append.
 *
 * @param i The append's index in the transcript, from 0.
 * @returns `m<i>`, alone or followed by one of the kinds of text a store must keep as written.
 */
export function prefixContent(i: number): string {
  return namedText(`m${i}`, tailOf(i));
}

/** The role of the writer's `i`-th append: the contract's four in turn. */
export function prefixRole(i: number): CellMessage["role"] {
  return turnRole(i);
}

/** What the writer's `i`-th text holds beyond `m<i>` ("an embedded NUL"), for a message. */
export function prefixKind(i: number): string {
  return textKind(tailOf(i));
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
