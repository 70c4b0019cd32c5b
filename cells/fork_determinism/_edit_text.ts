// The text of the editor's append at step `s`: its name (`u<s>`, `a<s>`, `e<s>`) and, in
// turn, each of cell 1's texts (`cells/engine/_texts.ts`: an embedded NUL, multi-byte UTF-8,
// line breaks and quotes, trailing white space). A fork copies them: a store whose fork path
// copies text apart from its append path (through a C string, or re-escaped) changes a
// branch's text where the main transcript keeps it.
import { namedText, textTail } from "../engine/_texts.ts";

/** The turns of `textTail` whose tails the editor takes in turn. */
const TURNS = [5, 1, 3, 6];

/** The text of the append at step `s` named `name`. */
export function editText(name: string, s: number): string {
  return namedText(name, textTail(TURNS[s % TURNS.length]!));
}
