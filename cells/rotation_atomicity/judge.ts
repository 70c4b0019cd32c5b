// Clause 3's reader and judge, shared by the SIGKILL cell (rotation_atomicity.ts) and the
// power-loss cell (power_loss_rotation_atomicity.ts): each rotation `parent-i` ->
// `child-i` is whole or absent, never a parent ended by compression without its child,
// the whole ones a prefix, each acknowledged one whole.
import { soundness, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import { textDifference } from "../engine/_texts.ts";
import { plainSummary, SUMMARY_ROLE, summaryKind, summaryText } from "./_summary.ts";
import type { StoredSession } from "../contract/target.ts";
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
  summaries: Record<string, (string | null)[]>;
  /** The roles of each continuation's messages, beside `summaries`. */
  summaryRoles: Record<string, string[]>;
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
    const published = await continuationMessages(store, sessions);
    const each = <T>(read: (message: { role: string; content: string | null }) => T) =>
      Object.fromEntries(
        Object.entries(published).map(([id, messages]) => [id, messages.map(read)]),
      );
    const summaries = each((m) => m.content);
    const summaryRoles = each((m) => m.role);
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
    return { sessions, summaries, summaryRoles, appendError, invariants };
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
  const show = (i: number) => {
    const child = byId.get(childOf(i));
    return `parent ${JSON.stringify(byId.get(parentOf(i)))}, child ${
      JSON.stringify(child)
    }, summary ${JSON.stringify(child ? recovered.summaries[child.id] : undefined)}`;
  };
  // Whole: the parent ended by compression, its child with one summary (its text is
  // judged apart, `changedSummaries`).
  const complete = (i: number) => {
    const parent = byId.get(parentOf(i));
    const child = byId.get(childOf(i));
    return parent?.endReason === "compression" && child?.parentSessionId === parent.id &&
      recovered.summaries[child.id]?.length === 1;
  };
  const summary = (i: number) => recovered.summaries[childOf(i)]?.[0];
  const summaryRole = (i: number) => recovered.summaryRoles[childOf(i)]?.[0];
  const absent = (i: number) => {
    const parent = byId.get(parentOf(i));
    return !byId.has(childOf(i)) && (parent === undefined || parent.endedAt === null);
  };
  const own = new RegExp(`^${prefix.replace(/\W/g, "\\$&")}(?:parent|child)-(\\d+)$`);
  const indices = recovered.sessions.map((s) => own.exec(s.id)?.[1])
    .filter((i) => i !== undefined).map(Number);
  return { show, complete, absent, indices, summary, summaryRole, childOf };
}

/** The acknowledged whole rotations whose summary does not read back as published. */
function changedSummaries(
  rotations: ReturnType<typeof rotationsOf>,
  acks: readonly Rotation[],
): string[] {
  return acks.filter((ack) => rotations.complete(ack.i)).flatMap((ack) => {
    const written = ack.plainSummary ? plainSummary(ack.i) : summaryText(ack.i);
    const read = rotations.summary(ack.i);
    if (read === written) return [];
    const kind = ack.plainSummary ? "nothing more" : summaryKind(ack.i);
    return [`${rotations.childOf(ack.i)} (${kind}) ${textDifference(read, written)}`];
  });
}

/** The acknowledged whole rotations whose summary reads back in another role. */
function summariesInAnotherRole(
  rotations: ReturnType<typeof rotationsOf>,
  acks: readonly Rotation[],
): string[] {
  return acks.filter((ack) => rotations.complete(ack.i)).flatMap((ack) => {
    const role = rotations.summaryRole(ack.i);
    return role === SUMMARY_ROLE ? [] : [
      `${rotations.childOf(ack.i)}'s summary read back as ${
        JSON.stringify(role)
      }, published as "${SUMMARY_ROLE}"`,
    ];
  });
}

/**
 * Every rotation up to the in-flight one `next` (or the highest found) is whole or absent,
 * the whole ones first.
 */
function partialRotations(rotations: ReturnType<typeof rotationsOf>, next: number): string[] {
  const { show, complete, absent, indices } = rotations;
  const highest = Math.max(next, ...indices);
  const partial: string[] = [];
  let prefixEnded = false;
  for (let i = 0; i <= highest; i++) {
    if (!complete(i) && !absent(i)) partial.push(`partial rotation ${i}: ${show(i)}`);
    if (!complete(i)) prefixEnded = true;
    else if (prefixEnded) partial.push(`rotation ${i} complete after an incomplete one`);
  }
  return partial;
}

/**
 * Reads the file twice through the target (the second pass then appends to each of
 * `journal.probe`, parents that must refuse it) and judges it: no compression orphan, every
 * acknowledged rotation whole, each rotation whole or absent and the whole ones a prefix,
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
  const changed = changedSummaries(rotations, acks);
  const recast = summariesInAnotherRole(rotations, acks);
  const checks: StateCheck[] = [
    {
      name: "no compression orphan",
      pattern: "rotation-not-atomic",
      violations: lonely.length ? [`compression orphans: ${lonely.join(", ")}`] : [],
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
      name: "every acknowledged summary kept as written (UTF-8, line breaks, a NUL)",
      pattern: "text-changed",
      violations: changed.length
        ? [`${changed.length} summary(ies) changed, first: ${changed[0]}`]
        : [],
      missing: [],
    },
    {
      name: `every acknowledged summary in the role published (${SUMMARY_ROLE})`,
      pattern: "role-changed",
      violations: recast.length
        ? [`${recast.length} summary(ies) in another role, first: ${recast[0]}`]
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
