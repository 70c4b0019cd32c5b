/**
 * Test target: the reference store, correct, that names its states and actions in upper
 * case, as a worker serialising Java's enums by name does: a handoff's state (`PENDING`,
 * `RUNNING`, …), an obligation's (`ATTEMPTING`, `DELIVERED`, …), a recovery's action
 * (`RESEND`), a message's role (`USER`) and the reason it writes itself when a rotation ends
 * a parent (`COMPRESSION`; a reason a caller gave is kept as given). The cells must read each
 * as the contract names it.
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

const upper: Spell = (value) => typeof value === "string" ? value.toUpperCase() : value;
const session = spelled({
  handoffState: upper,
  endReason: (reason) => reason === "compression" ? upper(reason) : reason,
});
const obligation = spelled({ state: upper });

const SPELLINGS: Readonly<Record<string, Spell>> = {
  ...sessionAnswers(session),
  ...obligationAnswers(obligation),
  getHandoffState: upper,
  getMessages: each(spelled({ role: upper })),
  sweepRecoverable: each(spelled({ obligation, action: upper })),
};

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return respelled(openReference(path, options), SPELLINGS);
}
