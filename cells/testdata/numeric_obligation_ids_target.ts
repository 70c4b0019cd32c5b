/**
 * Test target: the reference store, correct, whose obligation ids are numbers, as a store
 * keying its outbox by an integer primary key does (and a worker's JSON then carries
 * them). The number stands for the reference's id one to one; every call given one is
 * given the reference's id it stands for. The cells must pass them back as they got them.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import {
  type Method,
  obligationAnswers,
  respelled,
  type Spell,
  spelledEach,
  spelledFields,
  wrapped,
} from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** The number an id stands as: its first 52 bits, a safe integer. */
const numbered: Spell = (id) => typeof id === "string" ? parseInt(id.slice(0, 13), 16) : id;
const obligation = spelledFields({ obligationId: numbered });

const SPELLINGS: Readonly<Record<string, Spell>> = {
  ...obligationAnswers(obligation),
  sweepRecoverable: spelledEach(spelledFields({ obligation, idempotencyKey: numbered })),
};

/** The methods whose first argument is an obligation id. */
const BY_ID = new Set([
  "markAttempting",
  "markDelivered",
  "markFailed",
  "markUnknown",
  "getObligation",
]);

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openReference(path, options);
  const idOf = (id: unknown) =>
    store.listObligations().find((o) => numbered(o.obligationId) === id)?.obligationId ??
      `unknown-${id}`;
  const givenNumbers = wrapped(
    store,
    (key, method: Method) =>
      typeof key === "string" && BY_ID.has(key)
        ? (id: unknown, ...rest: unknown[]) => method(idOf(id), ...rest)
        : method,
  );
  return respelled(givenNumbers, SPELLINGS);
}
