// The state a rotation of a reopened session must leave, read by the stop judge in its own
// process and by fresh processes (`children/fence_child.ts`, role `check`): the parent ended,
// its continuation the chain's one live tip, resolution to it, invariants empty.
import { answerOf, describeAnswer } from "../contract/typed.ts";
import type { Store } from "../contract/target.ts";

/**
 * What is wrong with the chain `parent` -> `child` as `store` reads it, or `undefined`.
 *
 * @param store An open store.
 * @param chain The rotated parent and its published continuation.
 * @returns The problems in words, or `undefined` when the child is the one live tip.
 * @example
 * ```ts ignore
 * const found = await rotatedChainTrace(store, { parent: "x", child: "c" });
 * ```
 */
export async function rotatedChainTrace(
  store: Store,
  chain: { parent: string; child: string },
): Promise<string | undefined> {
  const { parent, child } = chain;
  const problems: string[] = [];
  const live = (await store.listSessions!())
    .filter((s) => (s.id === parent || s.id === child) && s.endedAt === null)
    .map((s) => s.id)
    .sort();
  if (live.length !== 1 || live[0] !== child) {
    problems.push(`the chain ${parent} -> ${child} has the live tips ${JSON.stringify(live)}`);
  }
  const tip = await answerOf(() => store.resolveResumeSessionId!(parent));
  if (tip.threw || tip.value !== child) {
    problems.push(`resolveResumeSessionId(${parent}) ${describeAnswer(tip)}, not ${child}`);
  }
  const broken = await store.checkInvariants?.() ?? [];
  if (broken.length) problems.push(`invariants: ${broken.join("; ")}`);
  return problems.length ? problems.join("; ") : undefined;
}
