// The contents cell 5's senders record: `<prefix> <i>` (which obligation it is) followed by one
// of the texts cell 1 appends (`../engine/_texts.ts`), the first obligation a NUL, since an
// outbox path that binds text apart from the append path (a C string, a hand-escaped format)
// must keep it as written too, and a sender records only a few obligations. A content the
// store refuses with a typed error is recorded plain instead (`refusedText`), which no store
// that cuts or trims the text can produce by accident.
import type { Store, StoredObligation } from "../contract/target.ts";
import {
  namedText,
  refusedText,
  textChange,
  type TextTail,
  textTail,
  writtenOrPlain,
} from "../engine/_texts.ts";

/** The turns of cell 1 whose texts obligations 0, 1, … carry, in turn: a NUL first. */
const TURNS = [5, 1, 3, 6, 0];

function tailOf(i: number): TextTail | undefined {
  return textTail(TURNS[i % TURNS.length]!);
}

/** The content of obligation `i` of a sender with this prefix (`effect 0` and its text). */
export function obligationContent(prefix: string, i: number): string {
  return namedText(`${prefix} ${i}`, tailOf(i));
}

/** The obligation a content read back names: `<prefix> <i>` and its parts. */
interface ContentName {
  name: string;
  prefix: string;
  i: number;
}

function contentName(content: string): ContentName | undefined {
  const match = /^(.*?) (\d+)(?!\d)/.exec(content);
  return match ? { name: match[0], prefix: match[1]!, i: Number(match[2]) } : undefined;
}

/** The name a content starts with (`effect 5`), for a message; the content when it has none. */
export function shownContent(content: string): string {
  return contentName(content)?.name ?? content;
}

/**
 * What the application recorded for the obligation a stored content names: the content
 * with its text, or its plain form when that is what was stored (`refused`). A content
 * naming no obligation of the cell is its own.
 */
export function writtenContent(stored: string): { content: string; refused: boolean } {
  const named = contentName(stored);
  if (!named) return { content: stored, refused: false };
  return {
    content: obligationContent(named.prefix, named.i),
    refused: stored === refusedText(named.name),
  };
}

/**
 * How a stored content differs from what was recorded (`undefined` when it is the same, or
 * the plain form recorded after a typed refusal): the obligation's name, the kind of its
 * text, and the first difference.
 */
export function contentChange(stored: string): string | undefined {
  const named = contentName(stored);
  return named ? textChange(stored, named.name, tailOf(named.i)) : undefined;
}

/**
 * Records obligation `i` with its text, or plain when the store refuses the text with a
 * typed error (an untyped refusal, or one of the plain form, is thrown).
 *
 * @param store The store.
 * @param o The session, the message reference, and the content's prefix and index.
 * @returns The obligation as the store returned it.
 */
export function recordContent(
  store: Store,
  o: { sessionId: string; messageRef: string; prefix: string; i: number },
): Promise<StoredObligation> {
  const { sessionId, messageRef } = o;
  const content = obligationContent(o.prefix, o.i);
  const plain = tailOf(o.i) ? refusedText(`${o.prefix} ${o.i}`) : content;
  return writtenOrPlain((refused) =>
    store.recordObligation!({ sessionId, messageRef, content: refused ? plain : content })
  );
}
