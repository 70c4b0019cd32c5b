/**
 * Test target: the reference store, correct, that spells "none" as a Go struct's JSON does
 * without `omitempty`: a session's `parentSessionId`, `endReason` and `handoffState` as `""`
 * and its `endedAt` as `0`, an obligation's `lastError` as `""`, no handoff state as `""`, and a
 * session or an obligation it does not have as the zero struct (every field empty). The cells
 * must read each as the contract's none.
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

const emptyText: Spell = (value) => value ?? "";
const session = spelled({
  parentSessionId: emptyText,
  endedAt: (value) => value ?? 0,
  endReason: emptyText,
  handoffState: emptyText,
});
const obligation = spelled({ lastError: emptyText });
const ZERO_SESSION = { id: "", parentSessionId: "", endedAt: 0, endReason: "", handoffState: "" };
const ZERO_OBLIGATION = {
  obligationId: "",
  content: "",
  state: "",
  deliveryFence: 0,
  lastError: "",
};

/** `spell`, and the zero struct `zero` for a record the store does not have. */
function orZero(spell: Spell, zero: object): Spell {
  return (value) => value === undefined || value === null ? { ...zero } : spell(value);
}

const SPELLINGS: Readonly<Record<string, Spell>> = {
  ...sessionAnswers(session),
  ...obligationAnswers(obligation),
  getSession: orZero(session, ZERO_SESSION),
  findLiveCompressionChild: orZero(session, ZERO_SESSION),
  getObligation: orZero(obligation, ZERO_OBLIGATION),
  getHandoffState: emptyText,
  sweepRecoverable: each(spelled({ obligation })),
};

/** `store` answering as a Go struct's JSON spells none. */
export function withGoZeroValues<T extends object>(store: T): T {
  return respelled(store, SPELLINGS);
}

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return withGoZeroValues(openReference(path, options));
}
