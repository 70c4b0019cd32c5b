// What cell 13's refused writes share: the writes to refuse, the sessions they name, and
// the resume on the file they leave.
import { ok } from "node:assert/strict";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";
import { type Answered, type Call, callsInChild } from "./_calls.ts";
import { readStoreState, type StoreState } from "./_store_state.ts";
import { type Appended, type RefusedWrite, resumeProblems } from "./judge.ts";

/** A write the store must refuse, and the session it would create. */
export interface Refusal {
  kind: RefusedWrite;
  call: Call;
  creates: string;
}

/** Every session a refused write names, read to see that none appeared. */
export const PROBED = ["ghost", "nobody", "f-past-end", "f-foreign", "f-orphan"];

/** How the refusals name message ids: as built, or symbolically for a child that builds. */
export interface IdNames {
  /** The id of session `session`'s `i`-th message. */
  of(session: string, i: number): unknown;
  /** An id past every message of the store. */
  past: unknown;
  /** Whether the store has `forkSession`. */
  fork: boolean;
}

/**
 * The writes to refuse on a valid store: an append to a missing session, and, with
 * `forkSession`, forks of `s` past its end and at a message of `t` (inside `s`'s range of
 * ids), and of a missing parent.
 */
export function refusalsWith(names: IdNames): Refusal[] {
  const append: Refusal = {
    kind: "append",
    creates: "ghost",
    call: {
      label: "appendMessage to the missing session ghost",
      method: "appendMessage",
      args: ["ghost", { role: "user", content: "to nobody" }],
    },
  };
  if (!names.fork) return [append];
  const fork = (label: string, args: unknown[]): Refusal => ({
    kind: "fork",
    creates: String(args[2]),
    call: { label, method: "forkSession", args },
  });
  return [
    append,
    fork("forkSession of s past its end", ["s", names.past, "f-past-end"]),
    fork("forkSession of s at a message of t", ["s", names.of("t", 0), "f-foreign"]),
    fork("forkSession of the missing session nobody", ["nobody", names.of("s", 0), "f-orphan"]),
  ];
}

/** What a resume did: the store before it, after it, its appends, and those refused. */
export interface Resumed {
  before: StoreState;
  after: StoreState;
  appended: Appended[];
  failed: Answered[];
}

/**
 * The resume on a recovered store: a child appends to `s` and `t` and is SIGKILLed right
 * after; a fresh process reads the store.
 */
export async function resumeOn(
  ctx: CellRun,
  recovered: { db: string; before: StoreState },
  name: string,
): Promise<Resumed> {
  const { db, before } = recovered;
  const contents = [["s", "resumed s"], ["t", "resumed t"]] as const;
  const answers = await callsInChild(ctx, {
    db,
    name,
    kill: true,
    calls: contents.map(([session, content]) => ({
      label: `appendMessage to ${session}`,
      method: "appendMessage",
      args: [session, { role: "user", content }],
    })),
  });
  const acknowledged = answers.slice(1).filter((a) => a.answer && !a.answer.threw);
  tally(ctx, "acknowledgedOps", acknowledged.length);
  const appended: Appended[] = contents.map(([session, content], i) => ({
    session,
    content,
    id: Number(answers[i + 1]?.answer?.value),
  }));
  const failed = answers.slice(1).filter((a) => !a.answer || a.answer.threw);
  const after = await readStoreState(ctx.target, db, PROBED);
  return { before, after, appended, failed };
}

/** The resume's step. */
export async function resumeStep(
  t: Deno.TestContext,
  name: string,
  resumed: Resumed,
): Promise<void> {
  await t.step(`${name}: appends land and survive a kill`, () => {
    const { before, after, appended, failed } = resumed;
    ok(failed.length === 0, `appends refused on the recovered store: ${JSON.stringify(failed)}`);
    const problems = resumeProblems(before, after, appended);
    ok(problems.length === 0, problems.join("; "));
  });
}
