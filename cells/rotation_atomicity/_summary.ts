// The summary rotation `i` publishes: `summary <i>` and the text cell 1 appends at turn `i`
// (`cells/engine/_texts.ts`). A store whose publish path binds text apart from its append
// path (a C string, a hand-escaped format) must keep it as written too.
import { namedText, textKind, textTail } from "../engine/_texts.ts";

/** The role a rotation's summary is published in. */
export const SUMMARY_ROLE = "system";

/** The summary rotation `i` publishes. */
export function summaryText(i: number): string {
  return namedText(plainSummary(i), textTail(i));
}

/** The summary published instead when the store refused the text with a typed error. */
export function plainSummary(i: number): string {
  return `summary ${i}`;
}

/** What the summary of rotation `i` holds beyond its name ("an embedded NUL"). */
export function summaryKind(i: number): string {
  return textKind(textTail(i));
}
