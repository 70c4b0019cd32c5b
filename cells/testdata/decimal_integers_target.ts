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
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

type Spell = (answer: unknown) => unknown;

const decimal: Spell = (value) => typeof value === "number" ? String(value) : value;

/** A plain object with `fields` spelled by `spell`; anything else as it is. */
function spelled(fields: Readonly<Record<string, Spell>>): Spell {
  return (record) => {
    if (record === null || typeof record !== "object") return record;
    const copy: Record<string, unknown> = { ...record };
    for (const [field, spell] of Object.entries(fields)) {
      if (field in copy) copy[field] = spell(copy[field]);
    }
    return copy;
  };
}

const each = (spell: Spell): Spell => (value) => Array.isArray(value) ? value.map(spell) : value;
const session = spelled({ endedAt: decimal });
const obligation = spelled({ deliveryFence: decimal });

const SPELLINGS: Readonly<Record<string, Spell>> = {
  appendMessage: decimal,
  appendMessages: each(decimal),
  getMessages: each(spelled({ id: decimal })),
  rewindToMessage: decimal,
  messageCount: decimal,
  markAttempting: decimal,
  getSession: session,
  listSessions: each(session),
  findLiveCompressionChild: session,
  listPendingHandoffs: each(session),
  recordObligation: obligation,
  getObligation: obligation,
  listObligations: each(obligation),
  sweepRecoverable: each(spelled({ obligation })),
};

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openReference(path, options);
  return wrapped(store, (key, method: Method) => {
    const spell = typeof key === "string" ? SPELLINGS[key] : undefined;
    return spell ? (...args: unknown[]) => spell(method(...args)) : method;
  });
}
