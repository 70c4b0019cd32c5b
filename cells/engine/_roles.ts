// The roles the cells' writers append in turn: the contract's four, so that a store keeping
// fewer (every message as the user's, a tool turn as the assistant's) reads back changed.
import type { CellMessage } from "../contract/target.ts";

/** The contract's roles, in the order the writers take them. */
const ROLES: readonly CellMessage["role"][] = ["user", "assistant", "tool", "system"];

/** The role of turn `k` (by `k % 4`): user, assistant, tool, system. */
export function turnRole(k: number): CellMessage["role"] {
  return ROLES[k % ROLES.length]!;
}
