// The roles the cells' writers append in turn: the contract's four, so that a store keeping
// fewer (every message as the user's, a tool turn as the assistant's) reads back changed. A
// store may refuse a role it cannot take alone (a tool turn without the call it answers) with
// an error of its own class, as it may a text: the writers then write the plain roles.
import type { CellMessage } from "../contract/target.ts";

/** The contract's roles, in the order the writers take them. */
const ROLES: readonly CellMessage["role"][] = ["user", "assistant", "tool", "system"];

/** The role of turn `k` (by `k % 4`): user, assistant, tool, system. */
export function turnRole(k: number): CellMessage["role"] {
  return ROLES[k % ROLES.length]!;
}

/**
 * The role of turn `k` among those every store takes, user and assistant in turn: what a
 * writer writes instead after a typed refusal (the same as {@linkcode turnRole} for turns 0
 * and 1 of every four).
 */
export function plainRole(k: number): CellMessage["role"] {
  return k % 2 === 0 ? "user" : "assistant";
}
