// Clause 4's reader and judge, shared by the SIGKILL cell (fork_determinism.ts) and the
// power-loss cell (power_loss_fork_determinism.ts): the recovered file is exactly what
// some prefix of the editor's steps leaves (the active transcript of `main`, the rows
// the rewinds removed inactive and no other, each branch whole or absent), never a mix,
// no row duplicated, and that prefix holds every acknowledged step.
import { soundness, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import { openTargetStore } from "../contract/target.ts";

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
  content: string | null;
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
    (await store.getMessages(session, { includeInactive })).map((m) => ({
      id: m.id,
      content: m.content,
      active: m.active !== false,
    }));
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

/**
 * Reads the editor's file twice through the target and judges it against its journals:
 * no row duplicated (contents and ids, inactive rows too); rows only the rewinds removed
 * inactive, those of acknowledged rewinds still there; the file exactly what a prefix
 * of the steps (the acknowledged ones and the one in flight) leaves, never a mix, and
 * that prefix holding every acknowledged step; branches whole or absent and disjoint
 * from `main`; two passes identical, `integrity_check` ok, the store's invariants.
 */
export async function judgeEdits(
  target: string,
  db: string,
  acks: readonly EditStep[],
  intents: readonly EditStep[],
): Promise<EditJudgement> {
  const last = acks.at(-1);
  const pending = intents.filter((i) => i.s > (last?.s ?? -1));
  const inflight = pending[0];
  const steps = [...acks, ...pending.slice(0, 1)];
  const forks = [...acks, ...pending].filter((a) => a.op === "fork").map((a) => a.branch!);
  const first = await recoverEdits(target, db, forks);
  const second = await recoverEdits(target, db, forks);
  const rewinds = acks.filter((a) => a.op === "rewind");

  const duplicated: string[] = [];
  const byContent = new Map<string | null, number[]>();
  for (const row of first.rows) {
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
  const ids = first.rows.map((r) => r.id);
  if (new Set(ids).size !== ids.length) duplicated.push(`duplicate row ids in ${ids.join(", ")}`);

  const byId = new Map(first.rows.map((r) => [r.id, r]));
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
  const stray = first.rows.find((r) => !r.active && !rewound.has(r.id));

  let after = -1;
  for (let n = steps.length; n >= 0 && after === -1; n--) {
    if (notAfter(first, steps, n) === null) after = n;
  }
  const whyNot = notAfter(first, steps, acks.length);

  const branchViolations: string[] = [];
  const branchesMissing: string[] = [];
  for (const fork of acks.filter((a) => a.op === "fork")) {
    const branch = first.branches[fork.branch!]!;
    if (!branch.exists) {
      branchesMissing.push(`branch ${fork.branch} (acknowledged at step ${fork.s}) is missing`);
    } else if (show(contents(branch.rows)) !== show(fork.expectBranch)) {
      branchViolations.push(
        `branch ${fork.branch} forked at ${fork.at} holds ${show(contents(branch.rows))}, not ${
          show(fork.expectBranch)
        }`,
      );
    }
  }
  for (const [name, branch] of Object.entries(first.branches)) {
    if (branch.rows.some((r) => byId.has(r.id))) {
      branchViolations.push(`branch ${name} shares rows with main`);
    }
  }
  if (inflight?.op === "fork") {
    const branch = first.branches[inflight.branch!]!;
    const absent = !branch.exists && branch.rows.length === 0;
    const complete = branch.exists &&
      show(contents(branch.rows)) === show(inflight.expectBranch);
    if (!absent && !complete) {
      branchViolations.push(
        `in-flight branch ${inflight.branch} is partial: exists ${branch.exists}, holds ${
          show(contents(branch.rows))
        }, expected ${show(inflight.expectBranch)} or nothing`,
      );
    }
  }

  const checks: StateCheck[] = [
    {
      name: `no prefix row duplicated after ${rewinds.length} rewinds`,
      violations: duplicated,
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
    {
      name: `transcript is acknowledged step ${last?.s ?? "none"} or in-flight ${
        inflight ? `${inflight.op} ${inflight.s}` : "none"
      } wholly applied`,
      violations: [
        ...(pending.length > 1
          ? [`${pending.length} steps in flight at once (${pending.map((p) => p.s).join(", ")})`]
          : []),
        ...(after === -1
          ? [
            `the state is no prefix of the ${steps.length} steps (after the acknowledged ones: ${whyNot})`,
          ]
          : []),
      ],
      missing: after !== -1 && after < acks.length
        ? [`the state is the one after ${after} of ${acks.length} acknowledged steps: ${whyNot}`]
        : [],
    },
    {
      name: "every acknowledged branch is its parent's prefix at fork time",
      violations: branchViolations,
      missing: branchesMissing,
    },
    {
      name: "recovery deterministic, integrity and invariants",
      violations: soundness(db, first, second, first.invariants),
      missing: [],
    },
  ];
  const applied = after;
  if (after === -1) {
    // No prefix fits (a consistency failure): count as lost only the acknowledged steps
    // whose transcript contents are missing, so durability and consistency stay apart.
    const active = show(first.rows.filter((r) => r.active).map((r) => r.content));
    for (let n = steps.length; n >= 0 && after === -1; n--) {
      if (active === show(n === 0 ? [] : steps[n - 1]!.expect.map(([, c]) => c))) after = n;
    }
  }
  return {
    state: first,
    ...(inflight ? { inflight } : {}),
    checks,
    applied,
    lost: Math.max(0, acks.length - Math.max(after, 0)),
  };
}
