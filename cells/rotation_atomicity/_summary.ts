// The handoff rotation `i` publishes: its summary, `summary <i>` and the text cell 1 appends at
// turn `i` (`cells/engine/_texts.ts`), then none to two turns carried over from the parent. A
// store whose publish path binds text apart from its append path (a C string, a hand-escaped
// format) must keep it as written too, and a store that keeps a handoff's first message alone
// (the summary as a column of the session) or reorders them is caught by a rotation of three.
import type { CellMessage } from "../contract/target.ts";
import { namedText, textKind, textTail } from "../engine/_texts.ts";

/** The role a rotation's summary is published in. */
export const SUMMARY_ROLE: CellMessage["role"] = "system";

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

/**
 * The messages rotation `i` publishes in its child: the summary (`plainSummary(i)` when the
 * store refused its text with a typed error) in `SUMMARY_ROLE`, then `i % 3` turns carried over.
 */
export function handoffOf(i: number, plain = false): CellMessage[] {
  const carried: CellMessage[] = [
    { role: "user", content: `carried ${i}.1` },
    { role: "assistant", content: `carried ${i}.2` },
  ];
  const summary = plain ? plainSummary(i) : summaryText(i);
  return [{ role: SUMMARY_ROLE, content: summary }, ...carried.slice(0, i % 3)];
}
