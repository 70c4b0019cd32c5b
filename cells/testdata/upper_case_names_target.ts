/**
 * Test target: the reference store, correct, that names its states and actions in upper
 * case, as a worker serialising Java's enums by name does: a handoff's state (`PENDING`,
 * `RUNNING`, …), an obligation's (`ATTEMPTING`, `DELIVERED`, …) and a recovery's action
 * (`RESEND`). The cells must read each as the contract names it.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

type Spell = (answer: unknown) => unknown;

const upper: Spell = (value) => typeof value === "string" ? value.toUpperCase() : value;

/** A plain object with `fields` spelled by their spellings; anything else as it is. */
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
const session = spelled({ handoffState: upper });
const obligation = spelled({ state: upper });

const SPELLINGS: Readonly<Record<string, Spell>> = {
  getHandoffState: upper,
  getSession: session,
  listSessions: each(session),
  findLiveCompressionChild: session,
  listPendingHandoffs: each(session),
  recordObligation: obligation,
  getObligation: obligation,
  listObligations: each(obligation),
  sweepRecoverable: each(spelled({ obligation, action: upper })),
};

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openReference(path, options);
  return wrapped(store, (key, method: Method) => {
    const spell = typeof key === "string" ? SPELLINGS[key] : undefined;
    return spell ? (...args: unknown[]) => spell(method(...args)) : method;
  });
}
