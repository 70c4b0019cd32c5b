// Clause 3's reader and judge, shared by the SIGKILL cell (rotation_atomicity.ts) and the
// power-loss cell (power_loss_rotation_atomicity.ts): each rotation `parent-i` ->
// `child-i` is whole or absent, never a parent ended by compression without its child,
// the whole ones a prefix, each acknowledged one whole.
import { soundness, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import { textDifference } from "../engine/_texts.ts";
import { handoffOf, summaryKind } from "./_summary.ts";
import type { StoredMessage, StoredSession } from "../contract/target.ts";
import {
  continuationMessages,
  invariantsOf,
  sortedSessions,
  withStore,
} from "../contract/with_store.ts";

/**
 * An acknowledged rotation of the rotator, as journaled (`plainSummary`: the store refused
 * the summary's text with a typed error and took `summary <i>` alone).
 */
export type Rotation = { i: number; parentId: string; childId: string; plainSummary?: true };

interface Recovered {
  sessions: StoredSession[];
  /** Each continuation's messages (its handoff), their roles and texts, by id. */
  handoffs: Record<string, Pick<StoredMessage, "role" | "content">[]>;
  appendError: Record<string, string>;
  invariants: string[];
}

/** Reads a rotation store back; appends to the `probe` parents (expecting the typed refusal). */
export async function recover(
  target: string,
  db: string,
  probe: readonly string[],
): Promise<Recovered> {
  return await withStore(target, db, async (store) => {
    const sessions = await sortedSessions(store);
    const handoffs = await continuationMessages(store, sessions);
    const invariants = await invariantsOf(store);
    const appendError: Record<string, string> = {};
    for (const parentId of probe) {
      try {
        await store.appendMessage(parentId, { role: "user", content: "after rotation" });
        appendError[parentId] = "accepted";
      } catch (error) {
        appendError[parentId] = error instanceof Error ? error.name : String(error);
      }
    }
    return { sessions, handoffs, appendError, invariants };
  });
}

/** The orphan query through the store: parents ended by compression with no child. */
export function orphans(sessions: readonly StoredSession[]): string[] {
  const parents = new Set(sessions.map((s) => s.parentSessionId).filter((p) => p !== null));
  return sessions.filter((s) => s.endReason === "compression" && !parents.has(s.id)).map((s) =>
    s.id
  );
}

/** Clause 3's verdict on one recovered file. */
export interface RotationJudgement extends StateJudgement {
  /** The recovered sessions (first pass). */
  sessions: StoredSession[];
}

/** What {@linkcode judgeRotations} judges a file against. */
export interface RotationJournal {
  /** The rotator's acknowledged rotations. */
  acks: readonly Rotation[];
  /** Rotated parents whose appends must be refused (appended to by the second pass). */
  probe?: readonly string[];
  /** The rotator's session prefix (a resumed one rotates sessions of its own). */
  prefix?: string;
}

/**
 * One rotator's rotations in a recovered file: whether rotation `i` is whole, and how it
 * shows (for the messages).
 */
function rotationsOf(recovered: Recovered, prefix: string) {
  const byId = new Map(recovered.sessions.map((s) => [s.id, s]));
  // A rotator's sessions are `<prefix>parent-i` and `<prefix>child-i` (a resumed one
  // rotates sessions of its own, judged apart).
  const parentOf = (i: number) => `${prefix}parent-${i}`;
  const childOf = (i: number) => `${prefix}child-${i}`;
  const handoff = (i: number) => ({
    contents: (recovered.handoffs[childOf(i)] ?? []).map((message) => message.content),
    roles: (recovered.handoffs[childOf(i)] ?? []).map((message) => message.role),
  });
  // A session missing from the store's list says so: a list cut to a page (which the
  // contract's "every session" forbids) shows here, not as a rotation lost.
  const listed = (id: string) =>
    byId.has(id)
      ? JSON.stringify(byId.get(id))
      : `not listed (listSessions answered ${recovered.sessions.length} sessions)`;
  const show = (i: number) => {
    const child = byId.get(childOf(i));
    return `parent ${listed(parentOf(i))}, child ${listed(childOf(i))}, handoff ${
      JSON.stringify(child ? handoff(i).contents : undefined)
    }`;
  };
  // Published: the parent ended by compression, its child linked to it (what the child holds
  // is judged apart, `handoffProblems`).
  const published = (i: number) => {
    const parent = byId.get(parentOf(i));
    const child = byId.get(childOf(i));
    return parent?.endReason === "compression" && child?.parentSessionId === parent.id;
  };
  // Whole: published, the child holding as many messages as the rotation published.
  const complete = (i: number) =>
    published(i) && handoff(i).contents.length === handoffOf(i).length;
  const absent = (i: number) => {
    const parent = byId.get(parentOf(i));
    return !byId.has(childOf(i)) && (parent === undefined || parent.endedAt === null);
  };
  const own = new RegExp(`^${prefix.replace(/\W/g, "\\$&")}(?:parent|child)-(\\d+)$`);
  const indices = recovered.sessions.map((s) => own.exec(s.id)?.[1])
    .filter((i) => i !== undefined).map(Number);
  return { show, published, complete, absent, indices, handoff, childOf };
}

/** The name a handoff message's text starts with (`summary <i>`, `carried <i>.<k>`), or `null`. */
function handoffName(text: string | null | undefined): string | null {
  return typeof text === "string"
    ? /^(?:summary \d+|carried \d+\.\d+)/.exec(text)?.[0] ?? null
    : null;
}

/**
 * What the children of the published rotations hold otherwise than published: messages
 * missing, added or reordered (every published rotation, the in-flight one too), and, for the
 * acknowledged ones, a text or a role changed.
 */
function handoffProblems(
  rotations: ReturnType<typeof rotationsOf>,
  acks: readonly Rotation[],
): { misplaced: string[]; changed: string[]; recast: string[] } {
  const acked = new Map(acks.map((ack) => [ack.i, ack]));
  const problems = { misplaced: [] as string[], changed: [] as string[], recast: [] as string[] };
  for (const i of new Set(rotations.indices)) {
    if (!rotations.published(i)) continue;
    const ack = acked.get(i);
    const { contents, roles } = rotations.handoff(i);
    const written = handoffOf(i, ack?.plainSummary);
    const read = contents.map(handoffName);
    const meant = written.map((message) => handoffName(message.content));
    const child = rotations.childOf(i);
    if (JSON.stringify(read) !== JSON.stringify(meant)) {
      problems.misplaced.push(
        `${child} holds ${JSON.stringify(read)}, published ${JSON.stringify(meant)}`,
      );
    } else if (ack) {
      written.forEach((message, j) => {
        const which = j === 0 ? child : `${child} message ${j}`;
        if (contents[j] !== message.content) {
          const kind = j > 0 || ack.plainSummary ? "nothing more" : summaryKind(i);
          problems.changed.push(
            `${which} (${kind}) ${textDifference(contents[j], message.content)}`,
          );
        }
        if (roles[j] !== message.role) {
          problems.recast.push(
            `${which} read back as ${JSON.stringify(roles[j])}, published as "${message.role}"`,
          );
        }
      });
    }
  }
  return problems;
}

/**
 * Every rotation up to the in-flight one `next` (or the highest found) is published or absent,
 * the published ones first (what a published child holds: `handoffProblems`).
 */
function partialRotations(rotations: ReturnType<typeof rotationsOf>, next: number): string[] {
  const { show, published, absent, indices } = rotations;
  const highest = Math.max(next, ...indices);
  const partial: string[] = [];
  let prefixEnded = false;
  for (let i = 0; i <= highest; i++) {
    if (!published(i) && !absent(i)) partial.push(`partial rotation ${i}: ${show(i)}`);
    if (!published(i)) prefixEnded = true;
    else if (prefixEnded) partial.push(`rotation ${i} complete after an incomplete one`);
  }
  return partial;
}

/**
 * Reads the file twice through the target (the second pass then appends to each of
 * `journal.probe`, parents that must refuse it) and judges it: no compression orphan, every
 * published child holding exactly its handoff (acknowledged ones text for text and role for
 * role), every acknowledged rotation whole, each rotation whole or absent and the whole ones a
 * prefix,
 * the probed appends refused with `CompressionSessionClosedError`, two passes identical,
 * `integrity_check` ok, the store's invariants.
 *
 * @example
 * ```ts ignore
 * const acks = readAckJournal<Rotation>(acksPath);
 * const judged = await judgeRotations(target, db, { acks, probe: [acks[0]!.parentId] });
 * console.log(judged.lost, judged.checks.map((c) => c.name));
 * ```
 */
export async function judgeRotations(
  target: string,
  db: string,
  journal: RotationJournal,
): Promise<RotationJudgement> {
  const { acks, probe = [], prefix = "" } = journal;
  // Reads only for the determinism pass, before the append probe writes anything.
  const first = await recover(target, db, []);
  const second = await recover(target, db, probe);
  const rotations = rotationsOf(first, prefix);
  const lost = acks.filter((ack) => !rotations.complete(ack.i));
  const next = (acks.at(-1)?.i ?? -1) + 1;
  const lonely = orphans(first.sessions);
  const { misplaced, changed, recast } = handoffProblems(rotations, acks);
  const checks: StateCheck[] = [
    {
      name: "no compression orphan",
      pattern: "rotation-not-atomic",
      violations: lonely.length ? [`compression orphans: ${lonely.join(", ")}`] : [],
      missing: [],
    },
    {
      name: "every published handoff whole, in the order published",
      pattern: "handoff-changed",
      violations: misplaced.length
        ? [`${misplaced.length} handoff(s) changed, first: ${misplaced[0]}`]
        : [],
      missing: [],
    },
    {
      name: `all ${acks.length} acknowledged rotations complete`,
      violations: [],
      missing: lost.length
        ? [
          `${lost.length} acknowledged rotation(s) not whole, first ${lost[0]!.i}: ${
            rotations.show(lost[0]!.i)
          }`,
        ]
        : [],
    },
    {
      name: "every acknowledged handoff text kept as written (UTF-8, line breaks, a NUL)",
      pattern: "text-changed",
      violations: changed.length ? [`${changed.length} text(s) changed, first: ${changed[0]}`] : [],
      missing: [],
    },
    {
      name: "every acknowledged handoff message in the role published (system, user, assistant)",
      pattern: "role-changed",
      violations: recast.length
        ? [`${recast.length} message(s) in another role, first: ${recast[0]}`]
        : [],
      missing: [],
    },
    {
      name: `in-flight rotation ${next} complete or absent`,
      pattern: "rotation-not-atomic",
      violations: partialRotations(rotations, next),
      missing: [],
    },
    {
      name: "appends to rotated parents refused with the typed error",
      violations: probe.filter((id) => second.appendError[id] !== "CompressionSessionClosedError")
        .map((id) => `append to ${id}: ${second.appendError[id]}`),
      missing: [],
    },
    {
      name: "recovery deterministic, integrity and invariants",
      violations: soundness(db, [first.sessions, second.sessions], first.invariants),
      missing: [],
    },
  ];
  return { sessions: first.sessions, checks, lost: lost.length };
}
