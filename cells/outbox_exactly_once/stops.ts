// Cell 5's stops inside its guarded writes. A store that checks a guard (an owner's
// liveness and a row's state in a sweep, a state in an attempt, a fence in a delivery
// mark) in one transaction and writes in another passes every kill and every forced race
// made at its first write: its check and its write are apart only when nobody holds a
// lock, where a held sweeper's lock cannot keep the others out. For k = 1, 2, … the actor
// (`children/outbox_stop.ts`) is stopped (SIGSTOP, through the LD_PRELOAD recorder) just
// before the k-th lock call inside its operation; the competing process, its store open,
// moves to completion meanwhile (another sweep takes the same dead owner's obligations; an
// obligation being attempted is settled; a recovery takes the attempt being booked over
// under a new fence); the actor is continued; then the competitor acts again. A write based
// on a check made before the stop must be refused and leave nothing: sweeps' claims are
// disjoint and cover what was owed, no obligation is attempted from a state it has left,
// no delivery is booked under a fence that moved. The walk ends when the operation
// completes before its k-th lock call; at least one move must land during a stop, else
// nothing was judged (a `HarnessError`).
import type { Child } from "../../harness/child.ts";
import { dirname } from "../../internal/path.ts";
import { copyTree, exists } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import {
  competitorWalkNames,
  readReport,
  stopBeforeLockCall,
  type StopResult,
  walkLockStops,
} from "../moves/stop_at_lock.ts";
import { killLanding } from "../moves/kill.ts";
import { OP_MARKS_ENV, seriesRecorder } from "../moves/kill_series.ts";
import { recorderEnv } from "../../recorder/record.ts";
import { readObligation } from "./state.ts";
import { tally } from "../engine/tally.ts";
import { type Answer, describeAnswer, verdict } from "../contract/typed.ts";
import { openTargetStore, type StoreMethod } from "../contract/target.ts";
import { OUTBOX_STOP } from "./_children.ts";

/** One walk: a scenario of `children/outbox_stop.ts`, its operation and transport. */
interface Walk {
  scenario: "sweep" | "attempt" | "delivered";
  /** The store method the actor is stopped in. */
  write: StoreMethod;
  idempotent: boolean;
  /** What the walk shows, for step names. */
  what: string;
}

const WALKS: readonly Walk[] = [
  {
    scenario: "sweep",
    write: "sweepRecoverable",
    idempotent: false,
    what: "a sweep while another takes the same dead owner's obligations and a live owner dies",
  },
  {
    scenario: "sweep",
    write: "sweepRecoverable",
    idempotent: true,
    what:
      "a resending sweep while another takes the same dead owner's obligations and a live owner dies",
  },
  {
    scenario: "attempt",
    write: "markAttempting",
    idempotent: false,
    what: "an attempt of an obligation settled meanwhile",
  },
  {
    scenario: "delivered",
    write: "markDelivered",
    idempotent: true,
    what: "a delivery mark after a recovery took the attempt over",
  },
];

interface Claim {
  id: string;
  action: string;
}
interface Moved {
  took: boolean;
  landed: boolean;
  moved: Answer;
  acted?: Answer | null;
}

const claimsOf = (answer: Answer | null | undefined): Claim[] =>
  answer && !answer.threw && Array.isArray(answer.value) ? answer.value as Claim[] : [];

/** Spawns a role of `outbox_stop.ts` on `db` (its report `<dir>/<role>.json`). */
function spawnRole(
  ctx: CellRun,
  walk: Walk,
  role: {
    db: string;
    dir: string;
    role: "holder" | "actor" | "owner";
    env?: Record<string, string>;
  },
): Child {
  const { db, dir, env } = role;
  const args = [
    db,
    walk.scenario,
    role.role,
    `${dir}/${role.role}.json`,
    `${dir}/go`,
    `${dirname(dir)}/dead.json`,
    walk.idempotent ? "1" : "0",
  ];
  return ctx.spawn(OUTBOX_STOP, args, env ? { env } : {});
}

/** Why the sweeps' claims are not disjoint or do not cover `owed`, or `undefined`. */
function sweepViolation(owed: string[], sweeps: [string, Claim[]][]): string | undefined {
  const by = new Map<string, string[]>();
  for (const [who, claims] of sweeps) {
    for (const c of claims) by.set(c.id, [...by.get(c.id) ?? [], `${who} (${c.action})`]);
  }
  const twice = [...by].filter(([, who]) => who.length > 1);
  const missed = owed.filter((id) => !by.has(id));
  const problems = [
    ...twice.map(([id, who]) => `${id} was taken by ${who.join(" and by ")}`),
    ...(missed.length ? [`${missed.join(", ")} taken by no sweep`] : []),
  ];
  return problems.length
    ? `${
      problems.join("; ")
    }: every sweeper stayed alive, so each obligation of a dead owner is taken by exactly one sweep (claims ${
      JSON.stringify(Object.fromEntries(sweeps.map(([w, c]) => [w, c.map((x) => x.id)])))
    })`
    : undefined;
}

/** One stop's outcome: the actor's answer and the competitor's report, raced or not. */
interface Outcome {
  db: string;
  stale: Answer;
  owner: Moved;
  raced: boolean;
  /** The dead owner's obligations (`dead.json`). */
  deadFile: string;
}

/** Judges one stop's outcome against every order of an atomic store. */
async function judge(ctx: CellRun, walk: Walk, outcome: Outcome): Promise<string | undefined> {
  const { db, stale, owner, raced, deadFile } = outcome;
  const store = await openTargetStore(ctx.target, db);
  try {
    if (walk.scenario === "sweep") {
      // Disjoint and whole in every order, raced or not.
      const owed = (await store.listObligations!()).map((o) => o.obligationId);
      return sweepViolation(owed, [
        ["the stopped sweep", claimsOf(stale)],
        ["the competing sweep", claimsOf(owner.moved)],
        ["its later sweep", claimsOf(owner.acted)],
      ]);
    }
    if (!raced) return undefined;
    const problems: string[] = [];
    if (verdict(stale) === "accepted") {
      problems.push(`the stale ${walk.write} was acknowledged (${describeAnswer(stale)})`);
    }
    const dead = readReport<Record<string, { id: string }>>(deadFile)!;
    if (walk.scenario === "attempt") {
      const o = await readObligation(store, dead.pending!.id);
      if (o?.state === "attempting") {
        problems.push(`the file shows the obligation attempting after it was settled`);
      }
    } else if (owner.acted && verdict(owner.acted) !== "accepted") {
      problems.push(
        `the recovery's own delivery mark under its new fence was refused afterwards (${
          describeAnswer(owner.acted)
        })`,
      );
    }
    return problems.length
      ? `${
        problems.join("; ")
      }, although the competing move committed while the actor was stopped, before its write landed (the guard was checked before the stop)`
      : undefined;
  } finally {
    await store.close();
  }
}

/** One stop before lock call k of a walk's operation, on a copy of the pristine store. */
function stopAt(
  ctx: CellRun,
  walk: Walk,
  k: number,
  stores: { library: string; pristine: string },
): Promise<StopResult> {
  const dir = ctx.run.file(`stops/${walk.scenario}-${walk.idempotent ? "idem" : "plain"}-${k}`);
  const label = `${walk.write} stopped before lock call ${k} (${walk.what})`;
  const db = `${dir}/db/store.db`;
  const start = (role: "holder" | "actor" | "owner", env?: Record<string, string>) =>
    spawnRole(ctx, walk, { db, dir, role, ...(env ? { env } : {}) });
  let holder: Child | undefined;
  return stopBeforeLockCall(ctx, {
    k,
    label,
    dir,
    library: stores.library,
    // The pristine folder holds the store's files alone: whatever it keeps there is its own.
    setup: () => Promise.resolve(copyTree(stores.pristine, `${dir}/db`)),
    actors: {
      what: "the actor",
      spawn: (env) => start("actor", env),
      // Its report, once whole: it stays alive until the judge is done.
      finished: () => readReport<Answer>(`${dir}/actor.json`) !== undefined,
    },
    competitor: {
      what: "the competitor",
      spawn() {
        holder = walk.scenario === "sweep" ? start("holder") : undefined;
        // The recorder tells when the competitor's move is refused a lock (held out by the
        // stopped actor's), so that a blocked move is not waited for.
        const owner = start("owner", ownerEnv(stores.library, dir));
        return [owner, ...holder ? [holder] : []];
      },
      ready: () =>
        exists(`${dir}/owner.json.ready`) && (!holder || exists(`${dir}/holder.json.ready`)),
      go: `${dir}/go`,
      took: () => exists(`${dir}/owner.json.took`),
      refused: () => exists(`${dir}/owner.refused`),
      async whileStopped() {
        if (!holder) return;
        // The live owner dies while the actor is stopped: its obligations are owed too.
        await killLanding(holder, `${label}: the live holder`);
        tally(ctx, "sigkills", 1);
      },
      done: () => readReport<Moved>(`${dir}/owner.json`) !== undefined,
    },
    // Judged while the actor and the competitor live: what they took stays theirs.
    async judge({ movedInTime }) {
      const stale = readReport<Answer>(`${dir}/actor.json`)!;
      const owner = readReport<Moved>(`${dir}/owner.json`)!;
      const raced = movedInTime && owner.took && !owner.landed;
      const deadFile = `${dirname(dir)}/dead.json`;
      const violation = await judge(ctx, walk, { db, stale, owner, raced, deadFile });
      return { raced, ...(violation ? { violation } : {}) };
    },
  });
}

/** The competitor's recorder: it logs its calls and notes a lock call it was refused. */
function ownerEnv(library: string, dir: string): Record<string, string> {
  return {
    ...recorderEnv({
      library,
      watched: `${dir}/db`,
      log: `${dir}/owner.fsrec.log`,
      mark: `${dir}/owner.marks.jsonl`,
      armAfterMarks: 1,
      refusedFile: `${dir}/owner.refused`,
    }),
    [OP_MARKS_ENV]: `${dir}/owner.marks.jsonl`,
  };
}

/** Walks one operation's lock calls; fails a step on a violation; checks the interleave. */
async function walkStops(
  ctx: CellRun,
  t: Deno.TestContext,
  walk: Walk,
  stores: { library: string; pristine: string },
): Promise<void> {
  const key = `stopSeries.${walk.write}${
    walk.scenario === "sweep" && walk.idempotent ? ".idempotent" : ""
  }`;
  await walkLockStops(ctx, t, {
    names: competitorWalkNames({
      key,
      write: walk.write,
      what: walk.what,
      mover: "the competitor",
    }),
    stopAt: (k) => stopAt(ctx, walk, k, stores),
  });
}

/**
 * Cell 5's stop series: each walk whose operation the target declares no crash point in
 * (`listed`), the attempt's only where the store can settle an open obligation
 * (`markUnknown` or `markFailed`).
 */
export async function outboxStops(
  ctx: CellRun,
  t: Deno.TestContext,
  listed: ReadonlySet<string>,
): Promise<void> {
  const walks = WALKS.filter((w) => ![...listed].some((p) => p.startsWith(`${w.write}:`)));
  if (!walks.length) return;
  const library = await seriesRecorder("stop series of cell 5");
  const base = ctx.run.file("stops");
  const pristine = `${base}/pristine`;
  await Deno.mkdir(pristine, { recursive: true });
  const dead = ctx.spawn(OUTBOX_STOP, [
    `${pristine}/store.db`,
    "sweep",
    "dead",
    `${base}/dead.out`,
    `${base}/go`,
    `${base}/dead.json`,
    "0",
  ]);
  const status = await dead.status;
  if (status.code !== 0) throw new Error(`the dead owner's setup failed: ${dead.describe()}`);
  await Deno.mkdir(`${base}/methods`);
  const probe = await openTargetStore(ctx.target, `${base}/methods/store.db`);
  const settles = typeof probe.markUnknown === "function" ||
    typeof probe.markFailed === "function";
  await probe.close();
  for (const walk of walks) {
    if (walk.scenario === "attempt" && !settles) {
      ctx.note("stopSeries.markAttempting", "not run: the store has no markUnknown or markFailed");
      continue;
    }
    await walkStops(ctx, t, walk, { library, pristine });
  }
}
