// Resume after recovery, for the recorded-call sweep: a recovered crash state that was
// judged sound is handed to a fresh process, which continues the clause's own operation
// on it (`continuation`: an append, a rotation, a rewind or fork, a claim, a new
// obligation) and closes the store; then the store is opened again and judged against
// the uncrashed run continued the same way from the state the recovered one equals: the
// acknowledged work of both lives present with its results, nothing else, invariants,
// integrity and two identical recovery passes. A store that reads its past but cannot
// continue it (a next id left stale by the crash, a torn tail it trips on) fails here. The
// move is the cells' (`cells/moves/resume.ts`); the fresh process is the sweep's own child.
import { join } from "node:path";
import { integrityIfSqlite } from "../../../harness/db_audit.ts";
import { writeImage } from "../../../recorder/image.ts";
import { continueState, type ResumeCandidate } from "../../../cells/moves/resume.ts";
import { acksOf, type CallChildren, readLines, runChild } from "./record.ts";
import { diff, recover, type Reference, same } from "../core/oracle.ts";
import {
  continuation,
  CONTINUATION_INDEX,
  type ProgramOp,
  ProgramRunner,
  snapshot,
  type StoreState,
  type SweepStore,
} from "../core/program.ts";

/** A recovered state to continue: where it came from and which uncrashed state it equals. */
export type CallCandidate = ResumeCandidate<{
  /** The program that crashed. */
  program: readonly ProgramOp[];
  /** The operation the crash interrupted (its clause's operation continues). */
  op: ProgramOp;
  /** The uncrashed run's state it recovered to: before operation `from` (or after all). */
  from: number;
  /** The state's number in its program (what `--call` replays). */
  call: number;
}>;

/** What every resume of one sweep shares. */
export interface ResumeContext {
  /** The children's setting. */
  children: CallChildren;
  /** The store's methods (the continuation uses only those it has). */
  methods: readonly string[];
  /** Opens the store in this process. */
  openStore: (path: string) => Promise<SweepStore>;
  /** The reference run of a program (with its files after each operation). */
  reference: (program: readonly ProgramOp[]) => Promise<Reference>;
  /** Where the resumes' folders go. */
  dir: string;
  /** The uncrashed continuations, by program, state and operations. */
  expected: Map<string, Promise<Continued>>;
}

/** The uncrashed run continued from one of its states: the state after, what each op returned. */
interface Continued {
  state: StoreState;
  results: [string, unknown][];
}

/** The operations a continuation runs: a claim only while a parked handoff is left. */
async function continueRun(
  store: SweepStore,
  seed: number,
  ops: readonly ProgramOp[],
): Promise<[string, unknown][]> {
  const runner = await ProgramRunner.resumed(store, seed);
  const results: [string, unknown][] = [];
  for (const [n, op] of ops.entries()) {
    if (op === "claim" && !runner.canClaim) continue;
    results.push([op, await runner.run(op, CONTINUATION_INDEX + n)]);
  }
  return results;
}

/** The uncrashed run's state `from`, continued with `ops` in this process (made once). */
function expectedAfter(
  ctx: ResumeContext,
  candidate: CallCandidate,
  ops: readonly ProgramOp[],
): Promise<Continued> {
  const key = `${candidate.program.join("+")}|${candidate.from}|${ops.join("+")}`;
  let result = ctx.expected.get(key);
  if (!result) {
    result = (async () => {
      const files = (await ctx.reference(candidate.program)).files?.[candidate.from];
      if (!files) throw new Error(`no reference files before operation ${candidate.from}`);
      const dir = Deno.makeTempDirSync({ dir: ctx.dir, prefix: "expected-" });
      writeImage(files, dir);
      const store = await ctx.openStore(join(dir, "store.db"));
      try {
        const results = await continueRun(store, ctx.children.seed, ops);
        return { state: await snapshot(store), results };
      } finally {
        await store.close();
        Deno.removeSync(dir, { recursive: true });
      }
    })();
    ctx.expected.set(key, result);
  }
  return result;
}

/**
 * Continues one recovered state in a fresh process and judges what it left.
 *
 * @param ctx The sweep's resume setting.
 * @param candidate The recovered state.
 * @param n Its number (names its folder).
 * @returns The problems (`[]` when both lives' work is there and nothing else), and the
 * folder (removed when it passed).
 */
export async function resumeState(
  ctx: ResumeContext,
  candidate: CallCandidate,
  n: number,
): Promise<{ problems: string[]; dir: string }> {
  const ops = continuation(candidate.op, ctx.methods);
  const dir = join(ctx.dir, `resume-${n}`);
  const problems = await continueState(candidate, dir, async (dir) => {
    const db = join(dir, "db", "store.db");
    const acksPath = join(dir, "acks.jsonl");
    const child = await runChild(ctx.children, [
      "resume",
      db,
      acksPath,
      String(ctx.children.seed),
      ops.join("+"),
    ], {});
    if (!child.status.success) {
      return [
        `a fresh process could not continue the recovered state with ${ops.join("+")}: ${
          child.stderr || `exit ${child.status.code}`
        }`,
      ];
    }
    try {
      return await judgeResumed(ctx, { candidate, ops, db, acksPath });
    } catch (error) {
      return [
        `cannot check the resumed store: ${error instanceof Error ? error.message : String(error)}`,
      ];
    }
  });
  return { problems: problems.map((p) => `resume after recovery (${ops.join("+")}): ${p}`), dir };
}

/** The resumed store against the uncrashed run continued the same way. */
async function judgeResumed(
  ctx: ResumeContext,
  resumed: { candidate: CallCandidate; ops: readonly ProgramOp[]; db: string; acksPath: string },
): Promise<string[]> {
  const { candidate, ops, db, acksPath } = resumed;
  const problems: string[] = [];
  const expected = await expectedAfter(ctx, candidate, ops);
  const acked = acksOf(readLines(acksPath)).map((a): [string, unknown] => [a.op, a.result]);
  if (!same(acked, expected.results)) {
    problems.push(
      `the continuation acknowledged ${
        JSON.stringify(acked)
      }, the uncrashed run continued the same way ${JSON.stringify(expected.results)}`,
    );
  }
  const first = await recover(ctx.openStore, db);
  const second = await recover(ctx.openStore, db);
  if (!same(first.state, second.state)) {
    problems.push(
      `a second recovery read another state: ${diff(second.state, first.state).join("; ")}`,
    );
  }
  if (!same(first.state, expected.state)) {
    problems.push(
      `the store after the second life is not the acknowledged work of both lives: ${
        diff(first.state, expected.state).join("; ")
      }`,
    );
  }
  const integrity = integrityIfSqlite(db);
  if (integrity !== undefined && integrity !== "ok") problems.push(`integrity_check: ${integrity}`);
  if (first.invariants.length) problems.push(`invariants: ${first.invariants.join("; ")}`);
  return problems;
}
