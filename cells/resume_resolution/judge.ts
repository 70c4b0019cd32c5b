// Clause 8's judge, pure: what each chain's live tip must be in a recovered state (from the
// sessions the store lists and the rotations it acknowledged), and whether what the store
// resolved, named as live continuation, reopened and refused agrees with it.
import type { StoredSession } from "../contract/target.ts";
import { type Answer, describeAnswer, verdict } from "../contract/typed.ts";
import { type ChainAck, chainIds, type ResolutionView } from "./_chain.ts";

/** A message as the judge compares it. */
export type MessageRow = { id: number; content: string | null };

/** What one chain must resolve to in a recovered state. */
export interface ChainTruth {
  /** The chain's ids in order (root first), present or not. */
  chain: string[];
  /** The live tip: the first session whose rotation is not published; `undefined` when the root is absent. */
  tip: string | undefined;
  /** The chain's sessions up to the tip, root first: those that must resolve to it. */
  upToTip: string[];
  /** What `findLiveCompressionChild` must name for each of `upToTip` (`null`: none). */
  liveChild: Record<string, string | null>;
  /** Rules the recovered chain breaks (no live tip, more than one, an acknowledged rotation lost). */
  violations: string[];
}

/** Whether `parent` was rotated into `child` and the rotation is whole in `byId`. */
function published(byId: ReadonlyMap<string, StoredSession>, parent: string, child: string) {
  return byId.get(parent)?.endReason === "compression" &&
    byId.get(child)?.parentSessionId === parent;
}

/**
 * The live tip of one chain in a recovered state: the root followed through every whole
 * rotation. Violations: the tip ended (a stranded chain: its rotation never published and
 * nothing reopened it), a session of the chain present past its tip (a second live session
 * or a partial rotation), an acknowledged rotation not whole.
 *
 * @param chain The chain's ids, root first.
 * @param sessions Every session the store lists.
 * @param acked The parents whose rotation was acknowledged.
 * @returns The chain's truth.
 * @example
 * ```ts
 * import { chainTruth } from "./judge.ts";
 * const s = (id: string, parent: string | null, ended: boolean) => ({
 *   id, parentSessionId: parent, endedAt: ended ? 1 : null, endReason: ended ? "compression" : null,
 * });
 * const truth = chainTruth(["a", "b", "c"], [s("a", null, true), s("b", "a", false)], new Set(["a"]));
 * console.log(truth.tip, truth.violations); // b []
 * ```
 */
export function chainTruth(
  chain: readonly string[],
  sessions: readonly StoredSession[],
  acked: ReadonlySet<string>,
): ChainTruth {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const violations: string[] = [];
  if (!byId.has(chain[0]!)) {
    const stray = chain.filter((id) => byId.has(id));
    if (stray.length) violations.push(`${stray.join(", ")} present without the root ${chain[0]}`);
    return { chain: [...chain], tip: undefined, upToTip: [], liveChild: {}, violations };
  }
  let t = 0;
  while (t + 1 < chain.length && published(byId, chain[t]!, chain[t + 1]!)) t++;
  const tip = chain[t]!;
  const tipRow = byId.get(tip)!;
  if (tipRow.endedAt !== null) {
    violations.push(
      `the tip ${tip} is ended (${tipRow.endReason}) with no published continuation: the chain is stranded, no live tip takes an append`,
    );
  }
  for (const id of chain.slice(t + 1).filter((id) => byId.has(id))) {
    violations.push(
      `${id} exists past the live tip ${tip}: ${
        JSON.stringify(byId.get(id))
      } (a second live session or a partial rotation)`,
    );
  }
  for (const parent of chain.slice(t).filter((id) => acked.has(id))) {
    violations.push(`the acknowledged rotation of ${parent} is not whole after recovery`);
  }
  const upToTip = chain.slice(0, t + 1);
  const liveChild = Object.fromEntries(
    upToTip.map((id, k) => [id, k + 1 === t ? tip : null] as const),
  );
  return { chain: [...chain], tip, upToTip, liveChild, violations };
}

/** How a resolved id is wrong, in words: no such session, or ended. */
function whatIs(id: string, byId: ReadonlyMap<string, StoredSession>): string {
  const row = byId.get(id);
  if (id.startsWith("threw ")) return "";
  if (!row) return " (no such session)";
  return row.endedAt !== null ? ` (ended: ${row.endReason})` : " (live)";
}

/**
 * Where one process's view of the chains differs from their truth: each session up to the
 * tip must resolve to the tip, and (when the view has them) name the tip as its live
 * continuation exactly when it is the tip's parent.
 *
 * @param truths The chains' truths.
 * @param view What one process saw.
 * @param at The process, for the messages (e.g. `fresh process 1`), and every session the
 *   store lists (to say what a wrong answer is).
 * @returns `{ resolve, live }` violations.
 * @example
 * ```ts ignore
 * const { resolve } = viewViolations(truths, view, { where: "the test process", sessions });
 * ```
 */
export function viewViolations(
  truths: readonly ChainTruth[],
  view: ResolutionView,
  at: { where: string; sessions: readonly StoredSession[] },
): { resolve: string[]; live: string[] } {
  const { where, sessions } = at;
  const byId = new Map(sessions.map((s) => [s.id, s]));
  const resolve: string[] = [];
  const live: string[] = [];
  for (const truth of truths) {
    for (const id of truth.upToTip) {
      const got = view.resolved[id] ?? "(not asked)";
      if (got !== truth.tip) {
        resolve.push(
          `${where}: resolveResumeSessionId(${id}) = ${got}${
            whatIs(got, byId)
          }, expected the live tip ${truth.tip}`,
        );
      }
      if (!view.live) continue;
      const child = view.live[id];
      const expected = truth.liveChild[id] ?? null;
      if (child !== expected) {
        live.push(
          `${where}: findLiveCompressionChild(${id}) = ${child ?? "undefined"}${
            child ? whatIs(child, byId) : ""
          }, expected ${expected ?? "undefined"}`,
        );
      }
    }
  }
  return { resolve, live };
}

/** One `reopenOrphanedCompressionSession` call of the recovery. */
export interface ReopenCall {
  /** The session, ended by compression. */
  id: string;
  /** Whether it had no published continuation (an orphan to reopen). */
  orphan: boolean;
  /** What the store answered. */
  answer: Answer;
}

/**
 * Whether the orphan recovery did its part and nothing else: every orphan reopened (the
 * call accepted and the session open after), every parent with a continuation refused
 * (`false` or a typed error), and no other session or message changed.
 *
 * @param calls The calls made.
 * @param before The sessions and messages before them.
 * @param after The sessions and messages after them.
 * @returns The violations.
 * @example
 * ```ts ignore
 * const violations = reopenViolations(calls, before, after);
 * ```
 */
export function reopenViolations(
  calls: readonly ReopenCall[],
  before: { sessions: readonly StoredSession[]; messages: Record<string, MessageRow[]> },
  after: { sessions: readonly StoredSession[]; messages: Record<string, MessageRow[]> },
): string[] {
  const violations: string[] = [];
  const afterById = new Map(after.sessions.map((s) => [s.id, s]));
  for (const { id, orphan, answer } of calls) {
    const said = describeAnswer(answer);
    if (orphan && (verdict(answer) !== "accepted" || afterById.get(id)?.endedAt !== null)) {
      violations.push(
        `the orphan ${id} (ended by compression, no continuation, its rotator dead) was not reopened: reopenOrphanedCompressionSession ${said}, then ${
          JSON.stringify(afterById.get(id))
        }`,
      );
    }
    if (!orphan && verdict(answer) !== "refused") {
      violations.push(
        `reopenOrphanedCompressionSession(${id}) ${said} for a parent with a published continuation (expected false or a typed error)`,
      );
    }
  }
  const reopened = new Set(calls.filter((c) => c.orphan).map((c) => c.id));
  const keep = <T extends { id: string }>(rows: readonly T[]) =>
    JSON.stringify(rows.filter((r) => !reopened.has(r.id)));
  if (keep(before.sessions) !== keep(after.sessions)) {
    const changed = after.sessions.filter((s) =>
      !reopened.has(s.id) &&
      JSON.stringify(s) !== JSON.stringify(before.sessions.find((b) => b.id === s.id))
    );
    violations.push(`the recovery changed other sessions: ${JSON.stringify(changed)}`);
  }
  if (JSON.stringify(before.messages) !== JSON.stringify(after.messages)) {
    violations.push("the recovery changed messages");
  }
  return violations;
}

/** An append probed on an ended parent: its answer and the parent's messages around it. */
export interface EndedAppend {
  /** The ended parent. */
  id: string;
  /** What the append answered. */
  answer: Answer;
  /** The parent's messages before and after. */
  before: MessageRow[];
  after: MessageRow[];
}

/**
 * Appends to ended parents must throw `CompressionSessionClosedError` and change nothing.
 *
 * @param probes The probes.
 * @returns The violations.
 * @example
 * ```ts ignore
 * const violations = endedAppendViolations(probes);
 * ```
 */
export function endedAppendViolations(probes: readonly EndedAppend[]): string[] {
  return probes.flatMap(({ id, answer, before, after }) => [
    ...(answer.name === "CompressionSessionClosedError"
      ? []
      : [`append to the ended parent ${id} ${describeAnswer(answer)}`]),
    ...(JSON.stringify(before) === JSON.stringify(after) ? [] : [
      `the refused append changed ${id}: ${before.length} message(s) before, ${after.length} after`,
    ]),
  ]);
}

/**
 * Every acknowledged append is in its session with its content.
 *
 * @param acks A life's journal.
 * @param messages The recovered messages by session.
 * @returns The appends missing, in words.
 * @example
 * ```ts
 * import { missingAppends } from "./judge.ts";
 * const acks = [{ op: "append" as const, session: "a", id: 1, content: "x" }];
 * console.log(missingAppends(acks, { a: [{ id: 1, content: "x" }] })); // []
 * ```
 */
export function missingAppends(
  acks: readonly ChainAck[],
  messages: Record<string, readonly MessageRow[]>,
): string[] {
  return acks.flatMap((ack) =>
    ack.op === "append" &&
      !(messages[ack.session] ?? []).some((m) => m.id === ack.id && m.content === ack.content)
      ? [
        `acknowledged append ${ack.id} (${
          JSON.stringify(ack.content)
        }) missing from ${ack.session}`,
      ]
      : []
  );
}

/** What a resumed life is judged against. */
export interface ResumedLife {
  /** The chain's live tip before the resumer ran. */
  tip: string;
  /** The highest message id in the chain (stored or acknowledged) before it ran. */
  floor: number;
  /** The resumer's journal. */
  acks: readonly ChainAck[];
  /** The chain's truth after it ran (its ids up to the old tip, then its rotation's child). */
  truth: ChainTruth;
  /** The recovered messages by session. */
  messages: Record<string, readonly MessageRow[]>;
}

/**
 * The resumer's life: it resolved the root to the live tip, its append through it landed
 * after everything the chain held and reads back from the tip, its rotation of the tip is
 * whole and the root then resolved to the new tip, which took the second append.
 *
 * @param life The tip before, the floor, the journal and the state after.
 * @returns The violations.
 * @example
 * ```ts ignore
 * const violations = resumedViolations({ tip, floor, acks, truth, messages });
 * ```
 */
export function resumedViolations(life: ResumedLife): string[] {
  const { tip, floor, acks, truth, messages } = life;
  const resolved = acks.filter((a) => a.op === "resolved");
  const appends = acks.filter((a) => a.op === "append");
  const rotation = acks.find((a) => a.op === "rotate");
  const childId = rotation?.childId;
  const violations: string[] = [];
  if (resolved[0]?.tip !== tip) {
    violations.push(
      `a fresh process resolved ${resolved[0]?.root} to ${
        resolved[0]?.tip
      }, expected the live tip ${tip}`,
    );
  }
  if (appends[0] && appends[0].id <= floor) {
    violations.push(
      `the append through the resolved tip got id ${
        appends[0].id
      }, not after the chain's last message (id ${floor})`,
    );
  }
  if (rotation?.parentId !== tip || truth.tip !== childId) {
    violations.push(
      `the rotation of the tip ${tip} into ${childId} is not the chain's new tip: it resolves to ${truth.tip}`,
    );
  }
  if (resolved[1]?.tip !== childId) {
    violations.push(
      `after the rotation the root resolved to ${resolved[1]?.tip}, expected ${childId}`,
    );
  }
  if (appends[1] && appends[0] && appends[1].id <= appends[0].id) {
    violations.push(
      `the second append's id ${appends[1].id} is not after the first's ${appends[0].id}`,
    );
  }
  return [...violations, ...truth.violations, ...missingAppends(acks, messages)];
}

/**
 * The first life's chains in a recovered file: `c0`, `c1`, … up to the highest one that
 * has a session or an acknowledgement.
 *
 * @param sessions Every session the store lists.
 * @param acks The first life's journal.
 * @returns Each chain's ids, root first.
 * @example
 * ```ts
 * import { firstLifeChains } from "./judge.ts";
 * const s = { id: "c1-0", parentSessionId: null, endedAt: null, endReason: null };
 * console.log(firstLifeChains([s], []).length); // 2
 * ```
 */
export function firstLifeChains(
  sessions: readonly StoredSession[],
  acks: readonly ChainAck[],
): string[][] {
  const own = /^c(\d+)-\d+$/;
  const named = [
    ...sessions.map((s) => s.id),
    ...acks.map((a) => a.op === "append" ? a.session : a.op === "rotate" ? a.childId : ""),
  ];
  const highest = Math.max(-1, ...named.map((id) => Number(own.exec(id)?.[1] ?? -1)));
  return Array.from({ length: highest + 1 }, (_, j) => chainIds("", j));
}
