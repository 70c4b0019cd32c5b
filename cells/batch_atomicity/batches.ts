// Cell 9's batches, shared by its writer child and its judge: which session and how many
// messages batch b of a writer has, and the content that names each message, so that a
// recovered row says which batch it belongs to and how big that batch is; after the name, in
// turn, a text the store must keep as written (`../engine/_texts.ts`), as cell 1's appends.
import type { CellMessage } from "../contract/target.ts";
import { plainRole, turnRole } from "../engine/_roles.ts";
import { namedText, refusedText, textChange, type TextTail, textTail } from "../engine/_texts.ts";

/** Sessions per writer. */
const SESSIONS = 3;

/** A message's place, read from its content. */
export interface BatchMember {
  /** The writer. */
  w: string;
  /** The batch number (per writer, in invocation order). */
  b: number;
  /** The message's index in its batch. */
  j: number;
  /** The batch's size. */
  n: number;
}

/** A line of a writer's journal: a batch invoked, or acknowledged with its ids. */
export type BatchEntry =
  | { k: "inv"; w: string; b: number; s: string; n: number; t0: number }
  | { k: "ack"; w: string; b: number; ids: number[]; t1: number };

/**
 * The sessions a writer appends to.
 *
 * @example
 * ```ts
 * import { writerSessions } from "./batches.ts";
 * console.log(writerSessions("w0")); // ["w0-s0", "w0-s1", "w0-s2"]
 * ```
 */
export function writerSessions(writer: string): string[] {
  return Array.from({ length: SESSIONS }, (_, i) => `${writer}-s${i}`);
}

/**
 * Batch `b` of `writer`: its session and its messages (1 to 20, varied and deterministic, in
 * the contract's roles in turn); with `refused`, as written again after the store refused it
 * with a typed error: each text beyond a name replaced by `refusedText`, the roles the user's
 * and the assistant's in turn.
 *
 * @example
 * ```ts
 * import { batchOf } from "./batches.ts";
 * const { session, messages } = batchOf("w0", 2);
 * console.log(session, messages.length, messages[0]?.content); // w0-s2 20 w0:b2.0/20
 * ```
 */
export function batchOf(
  writer: string,
  b: number,
  refused = false,
): { session: string; messages: CellMessage[] } {
  const n = 1 + ((b * 7 + 5) % 20);
  const text = refused ? refusedBatchText : batchText;
  const messages = Array.from({ length: n }, (_, j): CellMessage => ({
    role: refused ? plainRole(j) : turnRole(j),
    content: text({ w: writer, b, j, n }),
  }));
  return { session: writerSessions(writer)[b % SESSIONS]!, messages };
}

/** A member's text in a batch written again plain after the store refused its texts (typed). */
function refusedBatchText(member: BatchMember): string {
  return tailOf(member) ? refusedText(memberName(member)) : memberName(member);
}

/**
 * Whether a member's text read back is the one written plain after a typed refusal: a batch
 * of three or more always holds a member with a text beyond its name, so this tells, for
 * every batch whose roles differ from the plain ones, whether it was written plain.
 */
export function writtenPlain(member: BatchMember, read: unknown): boolean {
  return tailOf(member) !== undefined && read === refusedText(memberName(member));
}

/** A batch member's name: which writer's batch, its place and the batch's size. */
export function memberName(member: BatchMember): string {
  return `${member.w}:b${member.b}.${member.j}/${member.n}`;
}

/**
 * The text of a batch member: its name, then (for most) a text a store must keep as written.
 *
 * @example
 * ```ts
 * import { batchText } from "./batches.ts";
 * console.log(JSON.stringify(batchText({ w: "w0", b: 2, j: 3, n: 20 }))); // "w0:b2.3/20\u0000after a NUL"
 * ```
 */
export function batchText(member: BatchMember): string {
  return namedText(memberName(member), tailOf(member));
}

/**
 * How a member's text read back differs from the one written (`undefined` when it is that
 * text, or the plain one written after a typed refusal), for a message.
 */
export function batchChange(member: BatchMember, read: unknown): string | undefined {
  return textChange(read, memberName(member), tailOf(member));
}

/** The text that follows a member's name: the tails in turn along each batch. */
function tailOf(member: BatchMember): TextTail | undefined {
  return textTail(member.b + member.j);
}

/**
 * The batch member a content names, or `undefined` when it names none.
 *
 * @example
 * ```ts
 * import { memberOf } from "./batches.ts";
 * console.log(memberOf("w0:b2.3/20")); // { w: "w0", b: 2, j: 3, n: 20 }
 * ```
 */
export function memberOf(content: string | null): BatchMember | undefined {
  // The name alone: the text after it is judged apart.
  const match = /^([\w-]+):b(\d+)\.(\d+)\/(\d+)(?!\d)/.exec(content ?? "");
  if (!match) return undefined;
  return { w: match[1]!, b: Number(match[2]), j: Number(match[3]), n: Number(match[4]) };
}
