// Cell 13, inside each refused write: a fresh child builds the valid store and makes the
// refusal, killed at its 1st, 2nd, … file-system call (the LD_PRELOAD recorder): a store
// that writes something and takes it back in a later transaction is caught in between.
import { ok } from "node:assert/strict";
import { readAckJournal } from "../../harness/ack_journal.ts";
import type { CellRun } from "../engine/cell.ts";
import { soundness } from "../engine/state_check.ts";
import { killSeries, type SeriesKind } from "../moves/kill_series.ts";
import type { Answered, Call } from "./_calls.ts";
import { CALLS } from "./_children.ts";
import { APPENDS, readStoreState, VALID_SESSIONS } from "./_store_state.ts";
import { unchangedProblems } from "./judge.ts";
import { PROBED, type Refusal, refusalsWith, resumeOn, resumeStep } from "./_refusals.ts";

/** The calls that build the valid store in the child, before the refusal. */
const BUILD: readonly Call[] = [
  ...VALID_SESSIONS.map((session) => ({
    label: `build: createSession ${session}`,
    method: "createSession",
    args: [session],
  })),
  ...APPENDS.map(([session, content]) => ({
    label: `build: appendMessage ${content}`,
    method: "appendMessage",
    args: [session, { role: "user", content }],
  })),
];

/** The index in {@linkcode BUILD} of session `session`'s `i`-th append. */
function buildIndex(session: string, i: number): number {
  const appends = APPENDS.map(([s], j) => [s, j] as const).filter(([s]) => s === session);
  return VALID_SESSIONS.length + appends[i]![1];
}

/** The valid store the child built, as a fresh process reads it: from its journal. */
function builtState(journal: readonly Answered[]) {
  const messages: Record<string, unknown[]> = Object.fromEntries(
    VALID_SESSIONS.map((session) => [session, []]),
  );
  for (const [j, [session, content]] of APPENDS.entries()) {
    const id = journal[1 + VALID_SESSIONS.length + j]?.answer?.value;
    messages[session]!.push([Number(id), "user", content]);
  }
  return { messages, listed: null, exists: {}, invariants: null };
}

/** One crash state inside a refusal: the store the child built, nothing else. */
async function checkInside(
  cell: { ctx: CellRun; t: Deno.TestContext },
  refusal: Refusal,
  state: { db: string; dir: string; label: string },
): Promise<void> {
  const { ctx, t } = cell;
  const { db, dir, label } = state;
  const journal = readAckJournal<Answered>(`${dir}/calls.jsonl`);
  const first = await readStoreState(ctx.target, db, PROBED);
  const second = await readStoreState(ctx.target, db, PROBED);
  await t.step(`${label}: nothing created, nothing changed`, () => {
    ok(journal.length > BUILD.length, `the child built no valid store: ${JSON.stringify(journal)}`);
    const problems = [
      ...unchangedProblems(builtState(journal), first, [refusal.creates]),
      ...soundness(db, [first, second], first.invariants ?? []),
    ];
    ok(problems.length === 0, problems.join("; "));
  });
}

/**
 * A kill series inside each refused write (a `kind` of `off` runs none): each crash state
 * must hold the valid store and nothing else, and take appends that survive a kill.
 *
 * @param cell The cell's run and its test context.
 * @param options The series' kind, and whether the store has `forkSession`.
 * @example
 * ```ts ignore
 * await refusalSeries({ ctx, t }, { kind: "sync", fork: true });
 * ```
 */
export async function refusalSeries(
  cell: { ctx: CellRun; t: Deno.TestContext },
  options: { kind: SeriesKind | "off"; fork: boolean },
): Promise<void> {
  const { kind, fork } = options;
  if (kind === "off") return;
  const refusals = refusalsWith({
    of: (session, i) => ({ $answer: buildIndex(session, i) }),
    past: { $past: true },
    fork,
  });
  for (const refusal of refusals) {
    const calls = [...BUILD, refusal.call];
    await killSeries(cell.ctx, cell.t, {
      op: refusal.call.label,
      occurrence: calls.length,
      script: CALLS,
      args: (db, dir) => [db, `${dir}/calls.jsonl`, "-", JSON.stringify(calls)],
      check: (db, dir, label) => checkInside(cell, refusal, { db, dir, label }),
      resume: async (db, _dir, label) => {
        const before = await readStoreState(cell.ctx.target, db, PROBED);
        const resumed = await resumeOn(cell.ctx, { db, before }, `${label}-resumed`);
        await resumeStep(cell.t, `${label} · resumed`, resumed);
      },
      kind,
    });
  }
}
