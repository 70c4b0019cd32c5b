// The text of the editor's append at step `s`: its name (`u<s>`, `a<s>`, `e<s>`) and, in
// turn, each of cell 1's texts (`cells/engine/_texts.ts`: an embedded NUL, multi-byte UTF-8,
// line breaks and quotes, trailing white space). A fork copies them: a store whose fork path
// copies text apart from its append path (through a C string, or re-escaped) changes a
// branch's text where the main transcript keeps it.
import { namedText, textChange, type TextTail, textTail } from "../engine/_texts.ts";

/** The turns of `textTail` whose tails the editor takes in turn. */
const TURNS = [5, 1, 3, 6];

/** The name a text starts with (`u<s>`, `a<s>`, `e<s>`), and its step. */
const NAME = /^[uae](\d+)/;

function tailOf(s: number): TextTail | undefined {
  return textTail(TURNS[s % TURNS.length]!);
}

/** The text of the append at step `s` named `name`. */
export function editText(name: string, s: number): string {
  return namedText(name, tailOf(s));
}

/**
 * The text the editor meant for the row a stored text names (by the `u<s>`, `a<s>` or `e<s>`
 * it starts with), written as such or refused and written plain: the judges compare
 * transcripts by it, and {@linkcode editChange} says how a stored text differs from it.
 *
 * @param stored A text read back.
 * @returns The text meant; `stored` itself when it names no append.
 */
export function writtenEdit(stored: string): string {
  const named = NAME.exec(stored);
  return named ? editText(named[0], Number(named[1])) : stored;
}

/**
 * How a stored text differs from the text written (`undefined` when it is the same, or the
 * plain text written after a typed refusal): the row's name, the kind of its text, and the
 * first difference.
 */
export function editChange(stored: string): string | undefined {
  const named = NAME.exec(stored);
  return named ? textChange(stored, named[0], tailOf(Number(named[1]))) : undefined;
}

/**
 * The role the editor wrote the row a stored text names with: `user` for a user turn or an
 * edit (`u<s>`, `e<s>`), `assistant` for `a<s>`; `undefined` when it names no append.
 */
export function editRole(stored: string): "user" | "assistant" | undefined {
  const named = NAME.exec(stored);
  return named ? (named[0].startsWith("a") ? "assistant" : "user") : undefined;
}
