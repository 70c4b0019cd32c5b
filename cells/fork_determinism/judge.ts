// Clause 4's reader and judge, shared by the SIGKILL cell (fork_determinism.ts) and the
// power-loss cell (power_loss_fork_determinism.ts): the recovered file is exactly what
// some prefix of the editor's steps leaves (the active transcript of `main`, the rows
// the rewinds removed inactive and no other, each branch whole or absent), never a mix,
// no row duplicated, and that prefix holds every acknowledged step.
import { soundness, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import { openTargetStore } from "../contract/target.ts";
import { editChange, editRole, writtenEdit } from "./_edit_text.ts";

/** An [id, content] pair; `null` for the id an in-flight append has not got yet. */
type Pair = [number | null, string];

/** One journaled step of the editor (`children/editor.ts`): an intent, or the step acknowledged. */
export interface EditStep {
  s: number;
  op: "append" | "rewind" | "fork";
  /** The active transcript of `main` once the step is applied. */
  expect: Pair[];
  /** Rewind: the user message rewound to, and the ids it deactivates. */
  target?: number;
  deactivated?: number[];
  /** Fork: the branch, the message it forks at, and the contents it must hold. */
  branch?: string;
  at?: number;
  expectBranch?: string[];
}

interface Row {
  id: number;
  /** The role read back. */
  role: string;
  /** The text written for the row the stored text names (`u<s>`, …). */
  content: string | null;
  /** The stored text, when it is not `content`. */
  stored?: string;
  active: boolean;
}

/** What the editor's file holds: `main` (inactive rows too), the branches, the invariants. */
export interface RecoveredEdits {
  rows: Row[];
  branches: Record<string, { exists: boolean; rows: Row[] }>;
  invariants: string[];
}

async function recoverEdits(
  target: string,
  db: string,
  branches: readonly string[],
): Promise<RecoveredEdits> {
  const store = await openTargetStore(target, db);
  // A read error is a failure of the recovered state, never an empty transcript: only a
  // branch the store says does not exist may throw (an unknown session), and holds nothing.
  const read = async (session: string, includeInactive: boolean): Promise<Row[]> =>
    (await store.getMessages(session, { includeInactive })).map((m) => {
      const content = typeof m.content === "string" ? writtenEdit(m.content) : m.content;
      return {
        id: m.id,
        role: m.role,
        content,
        ...(content === m.content ? {} : { stored: m.content as string }),
        active: m.active !== false,
      };
    });
  try {
    const rows = await read("main", true);
    const out: RecoveredEdits["branches"] = {};
    for (const branch of branches) {
      // "Absent" means no branch session at all, not an empty one: asked of the store.
      const exists = store.getSession
        ? (await store.getSession(branch)) !== undefined
        : (await store.listSessions!()).some((session) => session.id === branch);
      const branchRows = exists ? await read(branch, false) : await read(branch, false).catch(
        () => [],
      );
      out[branch] = { exists, rows: branchRows };
    }
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { rows, branches: out, invariants };
  } finally {
    await store.close();
  }
}

const show = (value: unknown) => JSON.stringify(value);
const contents = (rows: readonly Row[]) => rows.map((r) => r.content);

/** Whether the recovered pairs are the expected ones (a `null` id: a new row's id). */
function sameTranscript(recovered: readonly Pair[], expected: readonly Pair[]): boolean {
  return recovered.length === expected.length &&
    recovered.every(([id, content], i) =>
      content === expected[i]![1] && (expected[i]![0] === null || id === expected[i]![0])
    );
}

/**
 * Why the state is not the one the first `n` steps leave (`null` when it is): the active
 * transcript of `main` is step n-1's, exactly the rows the first n rewinds removed are
 * inactive, the branches forked by the first n steps hold their parent's prefix at fork
 * time, and no later branch exists.
 */
function notAfter(state: RecoveredEdits, steps: readonly EditStep[], n: number): string | null {
  const active = state.rows.filter((r) => r.active).map((r) => [r.id, r.content] as Pair);
  const expected = n === 0 ? [] : steps[n - 1]!.expect;
  if (!sameTranscript(active, expected)) return `main is ${show(active)}, not ${show(expected)}`;
  const rewound = new Set(
    steps.slice(0, n).flatMap((step) => step.op === "rewind" ? step.deactivated ?? [] : []),
  );
  const inactive = state.rows.filter((r) => !r.active).map((r) => r.id);
  if (inactive.length !== rewound.size || inactive.some((id) => !rewound.has(id))) {
    return `inactive rows ${show(inactive)}, not ${show([...rewound])}`;
  }
  for (const [i, step] of steps.entries()) {
    if (step.op !== "fork") continue;
    const branch = state.branches[step.branch!]!;
    if (i < n) {
      if (!branch.exists || show(contents(branch.rows)) !== show(step.expectBranch)) {
        return `branch ${step.branch} holds ${
          show(contents(branch.rows))
        } (exists ${branch.exists}), not ${show(step.expectBranch)}`;
      }
    } else if (branch.exists || branch.rows.length) {
      return `branch ${step.branch} of a later step exists`;
    }
  }
  return null;
}

/** Clause 4's verdict on one recovered file. */
export interface EditJudgement extends StateJudgement {
  /** The recovered file (first pass). */
  state: RecoveredEdits;
  /** The step in flight at the kill (journaled as an intent, not acknowledged). */
  inflight?: EditStep;
  /** How many of the steps (acknowledged, then the one in flight) the state shows; -1: none fits. */
  applied: number;
}

/** The editor's journals {@linkcode judgeEdits} judges a file against. */
export interface EditJournals {
  /** The acknowledged steps. */
  acks: readonly EditStep[];
  /** The intents (the step in flight is the first after the last acknowledged one). */
  intents: readonly EditStep[];
}

/** Every row of `main` and of the branches, with where it is. */
function everyRow(state: RecoveredEdits): { row: Row; where: string }[] {
  return [
    ...state.rows.map((row) => ({ row, where: "main" })),
    ...Object.entries(state.branches).flatMap(([name, branch]) =>
      branch.rows.map((row) => ({ row, where: `branch ${name}` }))
    ),
  ];
}

/** Every text read back as written, in `main` and in each branch. */
function changedTexts(state: RecoveredEdits): string[] {
  const changed = everyRow(state).flatMap(({ row, where }) => {
    const change = row.stored === undefined ? undefined : editChange(row.stored);
    return change ? [`${where}: ${change}`] : [];
  });
  return changed.length ? [`${changed.length} text(s) changed, first: ${changed[0]}`] : [];
}

/** Every row of `main` and of the branches in the role it was written with. */
function changedRoles(state: RecoveredEdits): string[] {
  const changed = everyRow(state).flatMap(({ row, where }) => {
    const written = typeof row.content === "string" ? editRole(row.content) : undefined;
    return written && row.role !== written
      ? [`${where}: row ${row.id} read back as ${show(row.role)}, written as "${written}"`]
      : [];
  });
  return changed.length ? [`${changed.length} row(s) in another role, first: ${changed[0]}`] : [];
}

/** A row stored more than once: the same content twice, or the same id twice. */
function duplicatedRows(rows: readonly Row[]): string[] {
  const duplicated: string[] = [];
  const byContent = new Map<string | null, number[]>();
  for (const row of rows) {
    byContent.set(row.content, [...byContent.get(row.content) ?? [], row.id]);
  }
  const dup = [...byContent].find(([, ids]) => ids.length > 1);
  if (dup) {
    duplicated.push(
      `"${dup[0]}" is stored ${dup[1].length} times (ids ${
        dup[1].join(", ")
      }): a rewind re-inserted the kept prefix`,
    );
  }
  const ids = rows.map((r) => r.id);
  if (new Set(ids).size !== ids.length) duplicated.push(`duplicate row ids in ${ids.join(", ")}`);
  return duplicated;
}

/**
 * The rewinds' rows: each an acknowledged rewind removed still there and inactive
 * (`notRewound` lists those that are not), and no other row inactive (`stray`, the first).
 */
function rewoundRows(
  state: RecoveredEdits,
  rewinds: readonly EditStep[],
  inflight: EditStep | undefined,
): { notRewound: string[]; stray: Row | undefined } {
  const byId = new Map(state.rows.map((r) => [r.id, r]));
  const rewound = new Set([...rewinds, ...inflight?.op === "rewind" ? [inflight] : []]
    .flatMap((rewind) => rewind.deactivated!));
  const notRewound = rewinds.flatMap((rewind) =>
    rewind.deactivated!.flatMap((id) => {
      const row = byId.get(id);
      if (!row) return [`row ${id}, rewound at step ${rewind.s}, is gone`];
      return row.active
        ? [`row ${id} (${row.content}), rewound at step ${rewind.s}, is active again`]
        : [];
    })
  );
  const stray = state.rows.find((r) => !r.active && !rewound.has(r.id));
  return { notRewound, stray };
}

/**
 * The branches: every acknowledged one whole (`missing` when absent), none sharing rows
 * with `main`, the one in flight whole or absent.
 */
function branchProblems(
  state: RecoveredEdits,
  acks: readonly EditStep[],
  inflight: EditStep | undefined,
): { violations: string[]; missing: string[] } {
  const violations: string[] = [];
  const missing: string[] = [];
  const mainIds = new Set(state.rows.map((r) => r.id));
  for (const fork of acks.filter((a) => a.op === "fork")) {
    const branch = state.branches[fork.branch!]!;
    if (!branch.exists) {
      missing.push(`branch ${fork.branch} (acknowledged at step ${fork.s}) is missing`);
    } else if (show(contents(branch.rows)) !== show(fork.expectBranch)) {
      violations.push(
        `branch ${fork.branch} forked at ${fork.at} holds ${show(contents(branch.rows))}, not ${
          show(fork.expectBranch)
        }`,
      );
    }
  }
  for (const [name, branch] of Object.entries(state.branches)) {
    if (branch.rows.some((r) => mainIds.has(r.id))) {
      violations.push(`branch ${name} shares rows with main`);
    }
  }
  if (inflight?.op === "fork") {
    const branch = state.branches[inflight.branch!]!;
    const absent = !branch.exists && branch.rows.length === 0;
    const complete = branch.exists &&
      show(contents(branch.rows)) === show(inflight.expectBranch);
    if (!absent && !complete) {
      violations.push(
        `in-flight branch ${inflight.branch} is partial: exists ${branch.exists}, holds ${
          show(contents(branch.rows))
        }, expected ${show(inflight.expectBranch)} or nothing`,
      );
    }
  }
  return { violations, missing };
}

/** The most steps (acknowledged, then the one in flight) whose state the file is; -1: none. */
function stepsApplied(state: RecoveredEdits, steps: readonly EditStep[]): number {
  for (let n = steps.length; n >= 0; n--) {
    if (notAfter(state, steps, n) === null) return n;
  }
  return -1;
}

/**
 * When no prefix of the steps fits (a consistency failure), the steps whose transcript
 * contents the active rows still are: only the acknowledged steps past them count as lost,
 * so durability and consistency stay apart.
 */
function stepsByContent(state: RecoveredEdits, steps: readonly EditStep[]): number {
  const active = show(state.rows.filter((r) => r.active).map((r) => r.content));
  for (let n = steps.length; n >= 0; n--) {
    if (active === show(n === 0 ? [] : steps[n - 1]!.expect.map(([, c]) => c))) return n;
  }
  return -1;
}

/**
 * The transcript's check: at most one step in flight, the file the state after a prefix
 * of the steps, and that prefix holding every acknowledged step.
 */
function transcriptCheck(
  state: RecoveredEdits,
  journals: { acks: readonly EditStep[]; pending: readonly EditStep[] },
  after: number,
): StateCheck {
  const { acks, pending } = journals;
  const last = acks.at(-1);
  const inflight = pending[0];
  const steps = [...acks, ...pending.slice(0, 1)];
  const whyNot = notAfter(state, steps, acks.length);
  // With no prefix fitting, the in-flight step's own mismatch too: the acknowledged
  // state's may hide what differs.
  const inflightToo = after === -1 && inflight
    ? `; with ${inflight.op} ${inflight.s} applied: ${notAfter(state, steps, acks.length + 1)}`
    : "";
  return {
    name: `transcript is acknowledged step ${last?.s ?? "none"} or in-flight ${
      inflight ? `${inflight.op} ${inflight.s}` : "none"
    } wholly applied`,
    violations: [
      ...(pending.length > 1
        ? [`${pending.length} steps in flight at once (${pending.map((p) => p.s).join(", ")})`]
        : []),
      ...(after === -1
        ? [
          `the state is no prefix of the ${steps.length} steps (after the acknowledged ones: ${whyNot}${inflightToo})`,
        ]
        : []),
    ],
    missing: after !== -1 && after < acks.length
      ? [`the state is the one after ${after} of ${acks.length} acknowledged steps: ${whyNot}`]
      : [],
  };
}

/**
 * Reads the editor's file twice through the target and judges it against its journals:
 * no row duplicated (contents and ids, inactive rows too); rows only the rewinds removed
 * inactive, those of acknowledged rewinds still there; the file exactly what a prefix
 * of the steps (the acknowledged ones and the one in flight) leaves, never a mix, and
 * that prefix holding every acknowledged step; branches whole or absent and disjoint
 * from `main`; two passes identical, `integrity_check` ok, the store's invariants.
 *
 * @example
 * ```ts ignore
 * const judged = await judgeEdits(target, db, {
 *   acks: readAckJournal<EditStep>(acksPath),
 *   intents: readAckJournal<EditStep>(intentsPath),
 * });
 * console.log(judged.applied, judged.lost);
 * ```
 */
export async function judgeEdits(
  target: string,
  db: string,
  journals: EditJournals,
): Promise<EditJudgement> {
  const { acks, intents } = journals;
  const pending = intents.filter((i) => i.s > (acks.at(-1)?.s ?? -1));
  const inflight = pending[0];
  const steps = [...acks, ...pending.slice(0, 1)];
  const forks = [...acks, ...pending].filter((a) => a.op === "fork").map((a) => a.branch!);
  const first = await recoverEdits(target, db, forks);
  const second = await recoverEdits(target, db, forks);
  const rewinds = acks.filter((a) => a.op === "rewind");
  const { notRewound, stray } = rewoundRows(first, rewinds, inflight);
  const applied = stepsApplied(first, steps);
  const branches = branchProblems(first, acks, inflight);
  const checks: StateCheck[] = [
    {
      name: "every text kept as written (UTF-8, line breaks, a NUL)",
      pattern: "text-changed",
      violations: changedTexts(first),
      missing: [],
    },
    {
      name: "every role kept as written, in the branches too (user, assistant)",
      pattern: "role-changed",
      violations: changedRoles(first),
      missing: [],
    },
    {
      name: `no prefix row duplicated after ${rewinds.length} rewinds`,
      violations: duplicatedRows(first.rows),
      missing: [],
    },
    {
      name: "rewound rows stay inactive, kept prefix ids unchanged",
      violations: stray
        ? [
          `row ${stray.id} (${stray.content}) is inactive but no rewind removed it: the ids of the kept prefix changed`,
        ]
        : [],
      missing: notRewound,
    },
    transcriptCheck(first, { acks, pending }, applied),
    {
      name: "every acknowledged branch is its parent's prefix at fork time",
      violations: branches.violations,
      missing: branches.missing,
    },
    {
      name: "recovery deterministic, integrity and invariants",
      violations: soundness(db, [first, second], first.invariants),
      missing: [],
    },
  ];
  const kept = applied === -1 ? stepsByContent(first, steps) : applied;
  return {
    state: first,
    ...(inflight ? { inflight } : {}),
    checks,
    applied,
    lost: Math.max(0, acks.length - Math.max(kept, 0)),
  };
}
