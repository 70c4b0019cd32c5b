// What one recorded-call sweep shares, in every mode: its setting (the seeded template,
// the children, the references, the scratch folder of recovered states), the oracle's
// verdict on one state's files, the tallies per clause, the replay command, and the
// fresh processes that continue recovered states.
import { join } from "node:path";
import { RecoveredStates } from "../../../recorder/recovered.ts";
import { type JournalObservation, observeJournalMode } from "../../../harness/legs.ts";
import { loadTarget, type StoreOptions } from "../../../cells/contract/target.ts";
import { chooseResumes } from "../../../cells/moves/resume.ts";
import { type CallChildren, seedTemplate } from "./record.ts";
import { type Ack, checkRecovered, CLAUSES } from "../core/oracle.ts";
import type { ProgramOp, SweepStore } from "../core/program.ts";
import type { FileSet } from "../../../recorder/image.ts";
import { unfollowedRun } from "../../../recorder/crash_states.ts";
import type { RecorderLog } from "../../../recorder/log.ts";
import { pool } from "./plan.ts";
import { type CallCandidate, type ResumeContext, resumeState } from "./resume.ts";
import { reference, REFERENCE_TARGET, type References } from "../core/state_child.ts";
import type { CallFailure, CallSweepOptions, ClauseTally } from "../core/types.ts";

/** What one state's check found (shared by every state recovered to the same files). */
export interface StateVerdict {
  problems: string[];
  match?: "without" | "with" | "unchanged";
}

/** Everything one sweep shares. */
export interface Setting {
  options: CallSweepOptions;
  mode: "crash" | "power-loss" | "faults";
  children: CallChildren;
  methods: string[];
  root: string;
  template: string;
  refs: References;
  cache: RecoveredStates<StateVerdict>;
  resume: ResumeContext;
  /** The journal mode of the states, observed before recovery (judged by `legVerdict`). */
  observations: JournalObservation[];
  clauses: Record<string, ClauseTally>;
  counts: { states: number; seconds: number; children: number; childFailures: number };
  torn: { states: number; tearable: number; instants: number };
  resumes: { run: number; failed: number; candidates: number };
}

/** A clause's tally in the sweep, made on first use. */
export function tally(s: Setting, clause: string): ClauseTally {
  return s.clauses[clause] ??= { programs: 0, states: 0, torn: 0, resumes: 0, failures: 0 };
}

/** The clause a state belongs to: its interrupted operation's (the last one's, in close). */
export function clauseOf(program: readonly ProgramOp[], interrupted: number): string {
  return CLAUSES[program[Math.min(interrupted, program.length - 1)]!];
}

/** The command that replays one state (under faults: the fault tier on the leg × library). */
export function replay(s: Setting, program: string, call: number): string {
  const o = s.options;
  const library = Deno.env.get("DENO_SQLITE_PATH");
  if (s.mode === "faults") {
    return [
      "deno task conformance --tiers faults",
      `--target ${o.target}`,
      `--legs ${o.leg ?? "default"}`,
      ...(library ? [`--libraries ${library}`] : []),
      `--seed ${o.seed}`,
    ].join(" ");
  }
  return [
    "deno task sweep --syscalls",
    ...(s.mode === "power-loss" ? ["--power-loss"] : []),
    ...(o.target !== REFERENCE_TARGET ? ["--target", o.target] : []),
    // The library this process loaded (each library's share runs in a process of its own).
    ...(library ? ["--libraries", library] : []),
    "--legs",
    o.leg ?? "default",
    "--seed",
    String(o.seed),
    ...(s.mode === "power-loss" && o.subsets !== undefined ? ["--subsets", String(o.subsets)] : []),
    ...(s.mode === "power-loss" && o.profile ? ["--profile", o.profile] : []),
    "--program",
    program,
    "--call",
    String(call),
  ].join(" ");
}

/** Checks one state's files (in `state.dir`) with the oracle; the problems and how it matched. */
export async function judge(
  s: Setting,
  state: { program: readonly ProgramOp[]; dir: string; acks: readonly Ack[] },
): Promise<StateVerdict> {
  const { program, dir, acks } = state;
  const problems: string[] = [];
  const interrupted = acks.length;
  // A crash after the last acknowledgement (in close) must leave the final state: the
  // oracle sees it as a repeat of the last operation that changes nothing.
  const tailEnd = interrupted >= program.length;
  const checked = tailEnd ? [...program, program.at(-1)!] : [...program];
  const verdict = await checkRecovered({
    openStore: s.refs.openStore,
    state: { id: "", kind: "sequence", point: "syscall:k", k: 0, program: checked },
    interrupted,
    acks,
    db: join(dir, "store.db"),
    reference: async () => {
      const ref = await reference(s.refs, program, s.template);
      return tailEnd
        ? { snaps: [...ref.snaps, ref.snaps.at(-1)!], results: [...ref.results, undefined] }
        : ref;
    },
    fail: (clause, text) => problems.push(`${clause}: ${text}`),
  });
  return { problems, ...(verdict.match ? { match: verdict.match } : {}) };
}

/** The sweep's setting for a target on a leg, with its template seeded; or why not. */
export async function setting(
  options: CallSweepOptions,
  recorder: string,
): Promise<Setting | { failed: string }> {
  // Under the evidence folder when there is one: a failing run keeps its files there.
  const evidence = Deno.env.get("CELLS_EVIDENCE_DIR");
  if (evidence) Deno.mkdirSync(evidence, { recursive: true });
  const root = Deno.makeTempDirSync({
    prefix: "sweep-calls-",
    ...(evidence ? { dir: evidence } : {}),
  });
  const leg = options.leg ?? "default";
  const seeded = await seedTemplate(
    { target: options.target, leg, seed: options.seed },
    join(root, "template"),
  );
  if ("failed" in seeded) {
    Deno.removeSync(root, { recursive: true });
    return seeded;
  }
  const module = await loadTarget(options.target);
  const storeOptions: StoreOptions = leg === "default" ? {} : { journalMode: leg };
  const openStore = async (path: string) =>
    await module.openStore(path, storeOptions) as SweepStore;
  const children: CallChildren = {
    target: options.target,
    leg,
    seed: options.seed,
    recorder,
    templateFiles: seeded.files,
  };
  const refs: References = {
    openStore,
    seed: options.seed,
    references: new Map(),
    dir: root,
  };
  const template = join(root, "template", "store.db");
  return {
    options,
    mode: options.mode ?? "crash",
    children,
    methods: seeded.methods,
    root,
    template,
    refs,
    cache: new RecoveredStates<StateVerdict>(join(root, "scratch")),
    resume: {
      children,
      methods: seeded.methods,
      openStore,
      reference: (program) => reference(refs, program, template),
      dir: root,
      expected: new Map(),
    },
    observations: [observeJournalMode(template, "the seeded store, at rest", true)],
    clauses: {},
    counts: { states: 0, seconds: 0, children: 0, childFailures: 0 },
    torn: { states: 0, tearable: 0, instants: 0 },
    resumes: { run: 0, failed: 0, candidates: 0 },
  };
}

/** Continues the chosen recovered states in fresh processes; their failures. */
export async function resumeAll(
  s: Setting,
  candidates: readonly CallCandidate[][],
): Promise<CallFailure[]> {
  const perProgram = s.options.resumes ?? 1;
  const chosen = candidates.flatMap((list) => chooseResumes(list, perProgram, "in order"));
  s.resumes.candidates = candidates.reduce((n, list) => n + list.length, 0);
  const results = await pool(chosen, s.options.jobs ?? 2, (c, i) => resumeState(s.resume, c, i));
  const failures: CallFailure[] = [];
  for (const [i, result] of results.entries()) {
    const c = chosen[i]!;
    const clause = CLAUSES[c.op];
    s.resumes.run++;
    tally(s, clause).resumes++;
    if (!result.problems.length) continue;
    s.resumes.failed++;
    tally(s, clause).failures++;
    failures.push({
      program: c.program.join("+"),
      call: c.call,
      operation: c.from,
      clause,
      state: `${c.label}, continued`,
      kind: "resume",
      problems: result.problems,
      replay: replay(s, c.program.join("+"), c.call),
      evidence: result.dir,
    });
  }
  return failures;
}

/** A sound state to continue: the program resumes after what the state holds. */
export function resumeCandidate(
  program: readonly ProgramOp[],
  at: {
    acks: number;
    verdict: StateVerdict;
    raw: FileSet;
    number: number;
    state: { label: string };
  },
): CallCandidate {
  const interrupted = at.acks;
  const tailEnd = interrupted >= program.length;
  return {
    program,
    op: program[Math.min(interrupted, program.length - 1)]!,
    from: tailEnd || at.verdict.match === "with"
      ? Math.min(interrupted + 1, program.length)
      : interrupted,
    files: at.raw,
    call: at.number,
    label: at.state.label,
    landed: at.verdict.match === "with" && !tailEnd,
  };
}

/** A failure of a program's run as a whole (not of one state): its clause is its first operation's unless named. */
export function runFailure(
  s: Setting,
  program: readonly ProgramOp[],
  at: { state: string; problems: string[]; clause?: string; harness?: true },
): CallFailure {
  const name = program.join("+");
  return {
    program: name,
    call: 0,
    operation: -1,
    clause: at.clause ?? clauseOf(program, 0),
    state: at.state,
    kind: "run",
    problems: at.problems,
    replay: replay(s, name, 0),
    ...(at.harness ? { harness: at.harness } : {}),
  };
}

/**
 * The failure of a run the model cannot follow (`why`), kept in `dir`: an ERROR of the
 * suite, never a verdict.
 */
export function unjudgedFailure(
  s: Setting,
  program: readonly ProgramOp[],
  run: { state: string; why: string; dir: string; clause?: string },
): CallFailure {
  const failure = runFailure(s, program, {
    state: run.state,
    problems: [`the recorded run cannot be judged: ${run.why}`],
    ...(run.clause ? { clause: run.clause } : {}),
    harness: true,
  });
  return { ...failure, evidence: run.dir };
}

/**
 * {@linkcode unjudgedFailure} of a finished run the model cannot follow (a call it cannot
 * model, or a log that does not replay to the files the run left in `dir/db`);
 * `undefined` when the run can be judged.
 */
export function unfollowedFailure(
  s: Setting,
  program: readonly ProgramOp[],
  run: { state: string; log: RecorderLog; dir: string; clause?: string },
): CallFailure | undefined {
  const why = unfollowedRun(run.log, {
    baseline: s.children.templateFiles,
    dir: join(run.dir, "db"),
  });
  if (!why) return undefined;
  const { state, dir, clause } = run;
  return unjudgedFailure(s, program, { state, why, dir, ...(clause ? { clause } : {}) });
}
