import { deepStrictEqual, ok } from "node:assert/strict";
import { readAckJournal } from "../harness/ack_journal.ts";
import { integrityIfSqlite } from "../harness/db_audit.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { awaitCrash, killAfterAcks } from "./_kill.ts";
import { startTallies, tally } from "./_tally.ts";
import { CELL_METHODS, loadTarget, openTargetStore, type StoredMessage } from "./target.ts";

/**
 * Options of {@linkcode forkDeterminismCell}.
 *
 * @example
 * ```ts
 * import { forkDeterminismCell, type ForkDeterminismOptions } from "./fork_determinism.ts";
 * const options: ForkDeterminismOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
 *   seed: 42, // replay a reported run
 *   crashPoints: false,
 * };
 * for (const test of await forkDeterminismCell(options)) Deno.test(test);
 * ```
 */
export interface ForkDeterminismOptions extends CellOptions {
  /** Acknowledged steps to wait for before the random kill (default 30). */
  minAcknowledged?: number;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number;
  /** Also crash at every `rewindToMessage:*` and `forkSession:*` point the target lists (default true). */
  crashPoints?: boolean;
}

/** An [id, content] pair; `null` for the id an in-flight append has not got yet. */
type Pair = [number | null, string];

/** One journaled step of the editor (an intent, or the same step once acknowledged). */
interface Step {
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

interface Recovered {
  rows: Row[];
  branches: Record<string, { exists: boolean; rows: Row[] }>;
  invariants: string[];
}

async function recover(target: string, db: string, branches: string[]): Promise<Recovered> {
  const store = await openTargetStore(target, db);
  const read = async (session: string, includeInactive: boolean) =>
    (await store.getMessages(session, { includeInactive })).map((m) => ({
      id: m.id,
      content: m.content,
      active: m.active !== false,
    }));
  try {
    const rows = await read("main", true);
    const out: Recovered["branches"] = {};
    for (const branch of branches) {
      let branchRows: Row[] = [];
      try {
        branchRows = await read(branch, false);
      } catch {
        // An unknown session may throw: the branch is absent.
      }
      // "Absent" means no branch session at all, not an empty one: asked of the store.
      const exists = store.getSession
        ? (await store.getSession(branch)) !== undefined
        : (await store.listSessions!()).some((session) => session.id === branch);
      out[branch] = { exists, rows: branchRows };
    }
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { rows, branches: out, invariants };
  } finally {
    await store.close();
  }
}

const show = (pairs: readonly Pair[]) => JSON.stringify(pairs);

/** Whether the recovered pairs are the expected ones (a `null` id: a new row's id). */
function matches(recovered: readonly [number, string | null][], expected: readonly Pair[]) {
  return recovered.length === expected.length &&
    recovered.every(([id, content], i) =>
      content === expected[i]![1] && (expected[i]![0] === null || id === expected[i]![0])
    );
}

/**
 * The acknowledged state missing after recovery: rows of the last acknowledged
 * transcript absent from the active rows (unless the in-flight step, wholly applied,
 * removed them), plus acknowledged branches missing or changed.
 */
function lostSteps(
  recovered: Recovered,
  last: Step | undefined,
  inflight: Step | undefined,
  acks: Step[],
): number {
  const active = recovered.rows.filter((r) => r.active).map((r) =>
    [r.id, r.content] as [number, string | null]
  );
  let lost = 0;
  if (!(inflight && matches(active, inflight.expect))) {
    const present = new Set(active.map(([id, content]) => `${id}|${content}`));
    lost += (last?.expect ?? []).filter(([id, content]) =>
      id !== null && !present.has(`${id}|${content}`)
    ).length;
  }
  for (const fork of acks.filter((a) => a.op === "fork")) {
    const branch = recovered.branches[fork.branch!];
    const same = branch?.exists &&
      JSON.stringify(branch.rows.map((r) => r.content)) === JSON.stringify(fork.expectBranch);
    if (!same) lost++;
  }
  return lost;
}

async function checkRun(
  ctx: CellRun,
  t: Deno.TestContext,
  label: string,
  db: string,
  acksPath: string,
  intentsPath: string,
): Promise<void> {
  const acks = readAckJournal<Step>(acksPath);
  const intents = readAckJournal<Step>(intentsPath);
  const last = acks.at(-1);
  const pending = intents.filter((i) => i.s > (last?.s ?? -1));
  const inflight = pending[0];
  const forks = [...acks, ...pending].filter((a) => a.op === "fork").map((a) => a.branch!);
  const first = await recover(ctx.target, db, forks);
  const second = await recover(ctx.target, db, forks);
  const rewinds = acks.filter((a) => a.op === "rewind");
  ctx.note(label, {
    acknowledged: acks.length,
    rewinds: rewinds.length,
    forks: acks.filter((a) => a.op === "fork").length,
    inflight: inflight ? `${inflight.op} ${inflight.s}` : null,
    rows: first.rows.length,
  });
  tally(ctx, "acknowledgedOps", acks.length);
  tally(ctx, "lost", lostSteps(first, last, inflight, acks));

  await t.step(`${label}: no prefix row duplicated after ${rewinds.length} rewinds`, () => {
    const byContent = new Map<string | null, number[]>();
    for (const row of first.rows) {
      byContent.set(row.content, [...byContent.get(row.content) ?? [], row.id]);
    }
    const dup = [...byContent].find(([, ids]) => ids.length > 1);
    ok(
      !dup,
      `"${dup?.[0]}" is stored ${dup?.[1].length} times (ids ${
        dup?.[1].join(", ")
      }): a rewind re-inserted the kept prefix`,
    );
    const ids = first.rows.map((r) => r.id);
    ok(new Set(ids).size === ids.length, `duplicate row ids in ${ids.join(", ")}`);
  });
  await t.step(`${label}: rewound rows stay inactive, kept prefix ids unchanged`, () => {
    const byId = new Map(first.rows.map((r) => [r.id, r]));
    const rewound = new Set<number>();
    for (const rewind of rewinds) {
      for (const id of rewind.deactivated!) {
        rewound.add(id);
        const row = byId.get(id);
        ok(row, `row ${id}, rewound at step ${rewind.s}, is gone`);
        ok(!row.active, `row ${id} (${row.content}), rewound at step ${rewind.s}, is active again`);
      }
    }
    if (inflight?.op === "rewind") inflight.deactivated!.forEach((id) => rewound.add(id));
    const stray = first.rows.find((r) => !r.active && !rewound.has(r.id));
    ok(
      !stray,
      `row ${stray?.id} (${stray?.content}) is inactive but no rewind removed it: the ids of the kept prefix changed`,
    );
  });
  await t.step(
    `${label}: transcript is acknowledged step ${last?.s ?? "none"} or in-flight ${
      inflight ? `${inflight.op} ${inflight.s}` : "none"
    } wholly applied`,
    () => {
      ok(
        pending.length <= 1,
        `${pending.length} steps in flight at once (${pending.map((p) => p.s).join(", ")})`,
      );
      const active = first.rows.filter((r) => r.active).map((r) =>
        [r.id, r.content] as [number, string | null]
      );
      const acknowledged = last?.expect ?? [];
      const applied = inflight ? inflight.expect : undefined;
      ok(
        matches(active, acknowledged) || (applied !== undefined && matches(active, applied)),
        `recovered ${JSON.stringify(active)} is neither the acknowledged ${show(acknowledged)}${
          applied ? ` nor, with ${inflight!.op} ${inflight!.s} applied, ${show(applied)}` : ""
        }`,
      );
    },
  );
  await t.step(`${label}: every acknowledged branch is its parent's prefix at fork time`, () => {
    const mainIds = new Set(first.rows.map((r) => r.id));
    for (const fork of acks.filter((a) => a.op === "fork")) {
      const branch = first.branches[fork.branch!]!;
      ok(branch.exists, `branch ${fork.branch} (acknowledged at step ${fork.s}) is missing`);
      deepStrictEqual(
        branch.rows.map((r) => r.content),
        fork.expectBranch,
        `branch ${fork.branch} forked at ${fork.at}`,
      );
      ok(
        !branch.rows.some((r) => mainIds.has(r.id)),
        `branch ${fork.branch} shares rows with main`,
      );
    }
    if (inflight?.op === "fork") {
      const branch = first.branches[inflight.branch!]!;
      const absent = !branch.exists && branch.rows.length === 0;
      const complete = branch.exists &&
        JSON.stringify(branch.rows.map((r) => r.content)) === JSON.stringify(inflight.expectBranch);
      ok(
        absent || complete,
        `in-flight branch ${inflight.branch} is partial: exists ${branch.exists}, holds ${
          JSON.stringify(branch.rows.map((r) => r.content))
        }, expected ${JSON.stringify(inflight.expectBranch)} or nothing`,
      );
    }
  });
  await t.step(`${label}: recovery deterministic, integrity and invariants`, () => {
    deepStrictEqual(second, first);
    const integrity = integrityIfSqlite(db);
    ok(integrity === undefined || integrity === "ok", `integrity_check: ${integrity}`);
    deepStrictEqual(first.invariants, []);
  });
}

/**
 * The rewind's compare-and-swap: a rewind computed from a transcript that changed since
 * (another handle appended) is refused with `RewindConflictError` and changes nothing;
 * the same rewind with the current active ids goes through.
 */
async function checkCompareAndSwap(ctx: CellRun, t: Deno.TestContext, db: string) {
  const session = "cas";
  const store = await openTargetStore(ctx.target, db);
  let refused = "accepted";
  let before: StoredMessage[] = [];
  let after: StoredMessage[] = [];
  let rewound: number | string | undefined;
  try {
    await store.createSession(session);
    for (const [role, content] of [["user", "u0"], ["assistant", "a1"], ["user", "u2"]] as const) {
      await store.appendMessage(session, { role, content });
    }
    const seen = (await store.getMessages(session)).map((m) => m.id);
    // Another writer, on its own handle as another process would be, appends after the
    // caller read the transcript it computes the rewind from.
    const other = await openTargetStore(ctx.target, db);
    try {
      await other.appendMessage(session, { role: "assistant", content: "a3" });
    } finally {
      await other.close();
    }
    before = await store.getMessages(session, { includeInactive: true });
    try {
      await store.rewindToMessage!(session, seen[2]!, { expectedActiveIds: seen });
    } catch (error) {
      refused = error instanceof Error ? error.name : String(error);
    }
    after = await store.getMessages(session, { includeInactive: true });
    const current = after.filter((m) => m.active !== false).map((m) => m.id);
    try {
      rewound = await store.rewindToMessage!(session, seen[2]!, { expectedActiveIds: current });
    } catch (error) {
      rewound = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
  } finally {
    await store.close();
  }
  ctx.note("compareAndSwap", { staleRewind: refused, currentRewind: rewound });
  await t.step(
    "compare-and-swap: a rewind with stale active ids is refused with RewindConflictError and changes nothing",
    () => {
      ok(
        refused === "RewindConflictError",
        `the rewind with stale active ids was not refused with RewindConflictError (${refused})`,
      );
      deepStrictEqual(after, before, "the refused rewind changed the transcript");
      ok(
        rewound === 2,
        `the rewind with the current active ids returned ${rewound}, expected 2 rows deactivated`,
      );
    },
  );
}

/**
 * Cell 4, fork determinism on edit/rewind: recovery yields exactly the chosen prefix
 * after a rewind or a fork. A child runs edit/rewind/fork cycles on one session:
 * user and assistant turns, a rewind to an earlier user message (compare-and-swap on
 * the active ids) followed by the edited turn, and a fork at a chosen message. Before
 * each step it journals an intent with the transcript the step yields, after it the
 * acknowledged step with that transcript (ids and contents) or, for a fork, the branch
 * and its expected contents. It is SIGKILLed at a random moment after at least 30
 * acknowledged steps, then once more at every `rewindToMessage:*` and `forkSession:*`
 * crash point the target lists (the second of its kind, so one was acknowledged).
 * Each time: the active transcript is the last acknowledged one or it with the in-flight
 * step wholly applied, never a mix; no prefix row duplicated (contents and ids unique
 * across all rows, inactive included); every row an acknowledged rewind removed stays
 * inactive and no other row is inactive; every acknowledged branch equals its parent's
 * prefix at fork time, an in-flight one is complete or absent; recovery deterministic,
 * invariants hold. And on a fresh file, the compare-and-swap: a rewind computed from a
 * transcript another handle has appended to since is refused with `RewindConflictError`
 * and changes nothing, while the same rewind with the current ids goes through. Every
 * leg.
 *
 * @param options Target, leg, thresholds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { forkDeterminismCell } from "./fork_determinism.ts";
 * for (const test of await forkDeterminismCell({ target: new URL("./reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function forkDeterminismCell(
  options: ForkDeterminismOptions,
): Promise<Deno.TestDefinition[]> {
  const threshold = options.minAcknowledged ?? 30;
  return defineCell({
    id: 4,
    title: "fork determinism",
    legs: "all",
    requires: CELL_METHODS[4],
    requiresOneOf: [["getSession", "listSessions"]],
    async run(ctx, t) {
      startTallies(ctx);
      const seed = ctx.seed;
      const db = ctx.run.file("store.db");
      const acksPath = ctx.run.file("acks.jsonl");
      const intentsPath = ctx.run.file("intents.jsonl");
      // A random moment after the threshold: up to 20 more acknowledged steps.
      const killAt = threshold + Math.floor(ctx.random() * 21);
      const child = ctx.spawn("_editor.ts", [db, acksPath, intentsPath, String(seed)]);
      await killAfterAcks(ctx, child, db, acksPath, killAt, "edit steps", options.deadlineMs);
      await checkRun(ctx, t, "random kill", db, acksPath, intentsPath);
      await checkCompareAndSwap(ctx, t, ctx.run.file("cas.db"));

      if (options.crashPoints === false) return;
      const points = ((await loadTarget(ctx.target)).crashPoints?.() ?? [])
        .filter((p) => p.startsWith("rewindToMessage:") || p.startsWith("forkSession:"));
      ctx.note("crashPoints", points);
      for (const point of points) {
        const op = point.startsWith("rewind") ? "rewind" : "fork";
        const pointDb = ctx.run.file(`${point.replace(/\W/g, "_")}.db`);
        const pointAcks = `${pointDb}.acks.jsonl`;
        const pointIntents = `${pointDb}.intents.jsonl`;
        // @2: one step of the kind is acknowledged, the second dies at the point.
        const crasher = ctx.spawn("_editor.ts", [pointDb, pointAcks, pointIntents, String(seed)], {
          env: { SESSION_DB_CRASH_AT: `${point}@2` },
        });
        const killed = await awaitCrash(ctx, crasher, point, pointDb, pointAcks);
        await t.step(`${point}: the child died there by SIGKILL`, () => {
          ok(killed, crasher.describe());
          const acks = readAckJournal<Step>(pointAcks);
          const inflight = readAckJournal<Step>(pointIntents).at(-1);
          ok(
            acks.filter((a) => a.op === op).length === 1,
            `expected one acknowledged ${op} before the crash`,
          );
          ok(
            inflight?.op === op && inflight.s > (acks.at(-1)?.s ?? -1),
            `the step in flight is ${JSON.stringify(inflight)}, not a ${op}`,
          );
        });
        await checkRun(ctx, t, point, pointDb, pointAcks, pointIntents);
      }
    },
  }, options);
}
