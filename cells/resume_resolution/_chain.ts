// What cell 8's children and the cell share: the chains' names, the journal's entries, and
// one process's view of how a chain resolves (the same code in the test process and in
// the fresh processes, so that the views differ only by where they were read).
import type { Store } from "../contract/target.ts";

/** Sessions in one chain of the first life: the root, then two continuations. */
export const CHAIN_LENGTH = 3;

/** Appends to the root before its first rotation. */
export const ROOT_TURNS = 2;

/**
 * The session ids of chain `j`: `<prefix>c<j>-0` (the root), `-1`, `-2`.
 *
 * @param prefix The life's prefix (`""` for the first).
 * @param j The chain's number.
 * @returns The ids, root first.
 */
export function chainIds(prefix: string, j: number): string[] {
  return Array.from({ length: CHAIN_LENGTH }, (_, k) => `${prefix}c${j}-${k}`);
}

/** The id a resumed life rotates a tip into. */
export function resumedChildOf(tip: string): string {
  return `${tip}.r`;
}

/** A journaled acknowledgement: an append, a rotation, or (a resumer's) a resolution. */
export type ChainAck =
  | { op: "append"; session: string; id: number; content: string }
  | { op: "rotate"; parentId: string; childId: string }
  | { op: "resolved"; root: string; tip: string };

/** How one process saw the chains resolve. */
export interface ResolutionView {
  /** `resolveResumeSessionId` of each session: the id, or `threw <name>: <message>`. */
  resolved: Record<string, string>;
  /**
   * `findLiveCompressionChild` of each session: the child's id, `null` for none, or
   * `threw …`; absent when the store has no such method.
   */
  live?: Record<string, string | null>;
}

function threw(error: unknown): string {
  return `threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;
}

/**
 * Resolves every id through `store` (and asks for its live continuation when the store can
 * say).
 *
 * @param store The open store.
 * @param ids The sessions to resolve.
 * @returns What this process saw.
 */
export async function resolutionView(
  store: Store,
  ids: readonly string[],
): Promise<ResolutionView> {
  const resolved: Record<string, string> = {};
  const live: Record<string, string | null> = {};
  for (const id of ids) {
    try {
      resolved[id] = String(await store.resolveResumeSessionId!(id));
    } catch (error) {
      resolved[id] = threw(error);
    }
    if (!store.findLiveCompressionChild) continue;
    try {
      live[id] = (await store.findLiveCompressionChild(id))?.id ?? null;
    } catch (error) {
      live[id] = threw(error);
    }
  }
  return store.findLiveCompressionChild ? { resolved, live } : { resolved };
}
