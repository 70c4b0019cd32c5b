// Cell 13, part 2: states that break the store's schema rules, planted on disk by the
// target's own `plantViolation` into a valid store, opened by fresh processes: refused (a
// typed open error, a checkInvariants report, or typed errors from every read of the
// affected session), writes to that session refused or reported first, the same twice.
import { ok } from "node:assert/strict";
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import type { CellRun } from "../engine/cell.ts";
import { passesDiffer } from "../engine/state_check.ts";
import { loadTarget, type SchemaViolation, type TargetModule } from "../contract/target.ts";
import { describeAnswer, shownValue } from "../contract/typed.ts";
import { type Answered, type Call, callsInChild } from "./_calls.ts";
import { buildValidStore, readStoreState, type StoreState } from "./_store_state.ts";
import { comparable, judgePlanted, PLANTED_LABELS } from "./judge.ts";

/** The violations, each with the session it is in (`TargetModule.plantViolation`). */
const AFFECTED: Record<SchemaViolation, string> = {
  "orphan-message": "ghost",
  "id-regression": "s",
  "fork-past-end": "f",
};

/** The report and reads of the affected session a fresh process makes. */
function readsOf(affected: string): Call[] {
  return [
    { label: PLANTED_LABELS.invariants, method: "checkInvariants", args: [] },
    { label: `${PLANTED_LABELS.read}getMessages`, method: "getMessages", args: [affected] },
    {
      label: `${PLANTED_LABELS.read}getMessages with includeInactive`,
      method: "getMessages",
      args: [affected, { includeInactive: true }],
    },
    { label: `${PLANTED_LABELS.read}getSession`, method: "getSession", args: [affected] },
  ];
}

/** The writes to the affected session: an append, and a fork at its first message read. */
function writesOf(affected: string, read: Answered[], fallbackId: number): Call[] {
  const served = read.find((a) => a.label === `${PLANTED_LABELS.read}getMessages`)?.answer;
  const first = Array.isArray(served?.value)
    ? Number((served.value as { id: unknown }[])[0]?.id ?? fallbackId)
    : fallbackId;
  return [
    {
      label: `${PLANTED_LABELS.write}appendMessage`,
      method: "appendMessage",
      args: [affected, { role: "user", content: "after the plant" }],
    },
    {
      label: `${PLANTED_LABELS.write}forkSession`,
      method: "forkSession",
      args: [affected, first, `${affected}-branch`],
    },
  ];
}

/** One planted state as the fresh processes found it. */
interface Planted {
  violation: SchemaViolation;
  db: string;
  valid: StoreState;
  /** `false`: the store cannot hold it on disk; a string: plantViolation threw. */
  planted: boolean | string;
  passes?: [Answered[], Answered[]];
  written?: Answered[];
}

/**
 * What `plantViolation` said: `true` (or SQLite's `1`) planted, `false` (`0`) the store
 * cannot hold it; anything else (an `async` hook that forgot to `return`) a problem named,
 * never read as "cannot hold it", which would leave the rule unjudged.
 */
function plantedOf(violation: SchemaViolation, answer: unknown): boolean | string {
  if (answer === true || answer === 1 || answer === 1n) return true;
  if (answer === false || answer === 0 || answer === 0n) return false;
  return `plantViolation(${violation}) answered ${
    shownValue(answer)
  }, not true (planted) or false (the store cannot hold it on disk)`;
}

async function plantAndOpen(
  ctx: CellRun,
  module: TargetModule,
  violation: SchemaViolation,
): Promise<Planted> {
  const db = ctx.run.store(`planted-${violation}`);
  const built = await buildValidStore(ctx.target, db);
  const affected = AFFECTED[violation];
  const valid = await readStoreState(ctx.target, db, [affected]);
  let planted: boolean | string;
  try {
    planted = plantedOf(violation, await module.plantViolation!(db, violation));
  } catch (error) {
    planted = `plantViolation threw: ${error instanceof Error ? error.message : String(error)}`;
  }
  if (planted !== true) return { violation, db, valid, planted };
  const name = `planted-${violation}`;
  const reads = readsOf(affected);
  const first = await callsInChild(ctx, { db, name: `${name}-1`, calls: reads });
  const second = await callsInChild(ctx, { db, name: `${name}-2`, calls: reads });
  const writes = writesOf(affected, first, built.ids.s![0]!);
  const written = await callsInChild(ctx, {
    db,
    name: `${name}-writes`,
    calls: [...reads, ...writes],
  });
  return { violation, db, valid, planted, passes: [first, second], written };
}

async function plantedSteps(t: Deno.TestContext, found: Planted): Promise<void> {
  const { violation } = found;
  const affected = AFFECTED[violation];
  await t.step(`${violation}: the valid store passes its own checks before the plant`, () => {
    ok(typeof found.planted !== "string", found.planted as string);
    const invariants = found.valid.invariants ?? [];
    ok(invariants.length === 0, `checkInvariants before the plant: ${invariants.join("; ")}`);
  });
  if (!found.passes || !found.written) return;
  const [first, second] = found.passes;
  const judged = judgePlanted(affected, first);
  await t.step(
    `${violation}: refused when found on disk (a typed open error, a checkInvariants report, or typed errors from every read of ${affected})`,
    () => ok(judged.refusal.length === 0, judged.refusal.join("; ")),
  );
  const written = judgePlanted(affected, found.written);
  await t.step(`${violation}: every write to ${affected} refused typed or reported first`, () => {
    ok(written.writes.length === 0, written.writes.join("; "));
  });
  await t.step(`${violation}: two opens read the same, integrity`, () => {
    const differ = passesDiffer(comparable(first), comparable(second));
    ok(differ === null, differ ?? "");
    const integrity = integrityIfSqlite(found.db);
    ok(integrity === undefined || integrity === "ok", `integrity_check: ${integrity}`);
  });
}

/**
 * Part 2: for each violation the target's `plantViolation` writes, a valid store is built
 * and closed, the violation planted, and fresh processes open it: twice reading, once
 * reading and writing to the affected session. Violations the target cannot hold (or all
 * of them, without `plantViolation`) are left out and named in the figures.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @example
 * ```ts ignore
 * await foundOnDisk(ctx, t);
 * ```
 */
export async function foundOnDisk(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const module = await loadTarget(ctx.target);
  const violations = Object.keys(AFFECTED) as SchemaViolation[];
  if (typeof module.plantViolation !== "function") {
    ctx.note("onDiskLeftOut", "the target has no plantViolation: only writes are judged");
    return;
  }
  const found = await Promise.all(violations.map((v) => plantAndOpen(ctx, module, v)));
  const leftOut = found.filter((f) => f.planted === false).map((f) => f.violation);
  if (leftOut.length) ctx.note("onDiskLeftOut", `the store cannot hold: ${leftOut.join(", ")}`);
  const judged = found.filter((f) => f.planted !== false);
  ctx.note(
    "onDiskRefusedBy",
    Object.fromEntries(
      judged.filter((f) => f.passes).map((f) => {
        const how = judgePlanted(AFFECTED[f.violation], f.passes![0]).refusedBy;
        return [f.violation, how ?? `not refused: ${describeOpen(f.passes![0])}`];
      }),
    ),
  );
  for (const f of judged) await plantedSteps(t, f);
}

function describeOpen(answers: Answered[]): string {
  const open = answers.find((a) => a.label === "open")?.answer;
  return open ? `open ${describeAnswer(open)}` : "no open";
}
