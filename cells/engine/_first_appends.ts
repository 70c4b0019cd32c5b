// What the leg probe asks of a store's first appends before any cell relies on their
// answers: each answered the new message's id (an integer, increasing in append order), and
// `getMessages` answers messages with integer ids. A store answering otherwise (the inserted
// row, or nothing: an `async` method that forgot to `return`) would read, in every cell, as
// one that lost what it acknowledged; the probe names the contract instead. Whether the
// appends are there is never asked here: that is the cells' to judge, under their clauses
// (a store that applies its writes later would pass or fail this probe by a race).
import { shownValue as shown } from "../contract/typed.ts";

/**
 * Why the answers of a store's first appends to one new session break the contract, or
 * `undefined` when they keep it.
 *
 * @param session The session appended to.
 * @param ids What each `appendMessage` answered, in order (as the cells read answers).
 * @param rows What `getMessages(session)` answered after them (which rows it lists is not
 *   judged here).
 * @returns The problem, naming the contract, or `undefined`.
 */
export function firstAppendsProblem(
  session: string,
  ids: readonly unknown[],
  rows: unknown,
): string | undefined {
  const contract = "(cells/contract/store.ts: appendMessage returns the new message's id, " +
    "a number, increasing in append order; getMessages lists the messages with their ids)";
  const notId = ids.findIndex((id) => !Number.isSafeInteger(id));
  if (notId >= 0) {
    const id = ids[notId];
    return pastSafe(id)
      ? `appendMessage answered ${shown(id)}, ${PAST_SAFE}`
      : `appendMessage answered ${shown(id)}, not the new message's id ${contract}`;
  }
  if (ids.some((id, i) => i > 0 && (id as number) <= (ids[i - 1] as number))) {
    return `appendMessage answered ids ${
      ids.join(", ")
    } for appends in a row, not increasing ${contract}`;
  }
  if (!Array.isArray(rows)) {
    return `getMessages("${session}") answered ${
      shown(rows)
    }, not an array of messages ${contract}`;
  }
  const notRow = rows.find((row) => !Number.isSafeInteger((row as { id?: unknown } | null)?.id));
  if (notRow !== undefined) {
    const id = (notRow as { id?: unknown } | null)?.id;
    if (pastSafe(id)) {
      return `getMessages("${session}") answered a message id ${shown(id)}, ${PAST_SAFE}`;
    }
    return `getMessages("${session}") answered ${
      shown(notRow)
    } among its messages, not a message with its id ${contract}`;
  }
  return undefined;
}

const PAST_SAFE =
  "an integer past 2^53 - 1 (Number.MAX_SAFE_INTEGER): the cells compare, sort and " +
  "journal message ids as JavaScript numbers, so they must be safe integers (a target whose store " +
  "gives 64-bit ids, such as snowflakes, can answer each minus a fixed base: they stay unique and " +
  "increasing)";

/** An integer, as a bigint, a number or a decimal string, too large or small to be a safe one. */
function pastSafe(value: unknown): boolean {
  if (typeof value === "bigint") return true;
  if (typeof value === "number") return Number.isInteger(value);
  return typeof value === "string" && /^-?[1-9][0-9]{15,}$/.test(value) &&
    !Number.isSafeInteger(Number(value));
}
