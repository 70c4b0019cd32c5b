/**
 * Test target: the reference store, correct, that spells every integer of the contract in
 * decimal, as a worker whose JSON follows protobuf's mapping (an int64 is a string) or a
 * Postgres driver (a `bigint` column) does: message ids, counts, fences, a session's
 * `endedAt`. The cells must read each as its number.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import {
  obligationAnswers,
  respelled,
  sessionAnswers,
  type Spell,
  spelledEach as each,
  spelledFields as spelled,
} from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

const decimal: Spell = (value) => typeof value === "number" ? String(value) : value;
const session = spelled({ endedAt: decimal });
const obligation = spelled({ deliveryFence: decimal });

const SPELLINGS: Readonly<Record<string, Spell>> = {
  ...sessionAnswers(session),
  ...obligationAnswers(obligation),
  appendMessage: decimal,
  appendMessages: each(decimal),
  getMessages: each(spelled({ id: decimal })),
  rewindToMessage: decimal,
  messageCount: decimal,
  markAttempting: decimal,
  sweepRecoverable: each(spelled({ obligation })),
};

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return respelled(openReference(path, options), SPELLINGS);
}
