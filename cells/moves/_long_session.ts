// A long session: longer than the pages stores answer by default (a LIMIT of 1,000, 5,000 or
// 10,000, one page of a paginated query), appended in batches of the size cell 9's writers
// reach at most. Cell 9 reads one back whole, cell 4 forks one.
import type { CellMessage } from "../contract/target.ts";
import { plainRole } from "../engine/_roles.ts";

/** The session. */
export const LONG_SESSION = "long";

/** Its messages. */
export const LONG_MESSAGES = 12_000;

/** Messages per batch. */
export const LONG_BATCH = 20;

/** A line of the long writer's journal: batch `b` acknowledged with its ids. */
export interface LongAck {
  /** The batch. */
  b: number;
  /** The ids the store answered. */
  ids: number[];
}

/** Batch `b`: messages `LONG_BATCH * b` on, the user's and the assistant's in turn. */
export function longBatch(b: number): CellMessage[] {
  return Array.from({ length: LONG_BATCH }, (_, j) => {
    const i = b * LONG_BATCH + j;
    return { role: plainRole(i), content: longText(i) };
  });
}

/** The text of the session's message `i`. */
export function longText(i: number): string {
  return `long ${i}`;
}
