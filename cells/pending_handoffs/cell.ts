import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { startTallies } from "../engine/tally.ts";
import { seriesKind } from "../moves/kill_series.ts";
import { openTargetStore, type StoreMethod } from "../contract/target.ts";
import { handoffRounds, setUpHandoffs, setUpManyPending } from "./rounds.ts";
import { handoffSeries } from "./series.ts";
import { judgeLife } from "./_life.ts";

/**
 * Options of {@linkcode pendingHandoffsCell}.
 *
 * @example
 * ```ts
 * import { pendingHandoffsCell, type PendingHandoffsOptions } from "./cell.ts";
 * const options: PendingHandoffsOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   rounds: 2,
 * };
 * for (const test of await pendingHandoffsCell(options)) Deno.test(test);
 * ```
 */
export interface PendingHandoffsOptions extends CellOptions {
  /** Lives killed at a random instant, each judged and resumed (default 3). */
  rounds?: number;
}

/**
 * Cell 12, pending handoffs: `listPendingHandoffs` lists every session whose handoff is
 * requested and not claimed (`getHandoffState` is `pending`) exactly once, and no session
 * in any other state.
 *
 * A file is set up with handoffs in every state: never requested, pending, running,
 * completed, failed (while pending or running), and re-requested after a failure and after
 * a completion; a fresh process judges the list as set up. So it does a second file with 150
 * pending handoffs at once (every fourth claimed), more than a page of a list holds. Then,
 * for each round, two children request, claim, complete and fail
 * handoffs of its sessions (each journaling every operation before it and once answered)
 * and are SIGKILLed at a random instant. From a fresh process: every session is in a state
 * its acknowledged operations (and the one in flight) leave; the list holds each pending
 * session once and nothing else (an acknowledged request is listed until claimed, an
 * acknowledged claim never); two reads are the same, the invariants empty, integrity ok.
 * Resume: a fresh process requests a handoff (listed at once from another process) and
 * claims a listed one, is SIGKILLed right after, and the claimed one has left the list.
 * With the kill series (through the LD_PRELOAD recorder) a child is killed before each
 * file-system call of a re-request after a failure, a claim and a re-request after a
 * completion, each state judged and resumed alike. Without `completeHandoff` or
 * `failHandoff` the histories and operations needing them are left out and named in the
 * figures (the series too). Every leg.
 *
 * @param options Target, leg, rounds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { pendingHandoffsCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await pendingHandoffsCell({ target })) Deno.test(test);
 * ```
 */
export function pendingHandoffsCell(
  options: PendingHandoffsOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 12,
    // The kill series loads the recorder (LD_PRELOAD).
    preloads: true,
    run: (ctx, t) => pendingRun(ctx, t, options),
  }, options);
}

/** Which settling methods the store has; those it lacks are noted as left out. */
async function settlingMethods(ctx: CellRun): Promise<{ complete: boolean; fail: boolean }> {
  const probe = await openTargetStore(ctx.target, ctx.run.store("methods"));
  const has = (m: StoreMethod) => typeof probe[m] === "function";
  const settles = { complete: has("completeHandoff"), fail: has("failHandoff") };
  await probe.close();
  const missing = (["completeHandoff", "failHandoff"] as const).filter((m) => !has(m));
  if (missing.length) ctx.note("leftOut", `the store lacks ${missing.join(", ")}`);
  return settles;
}

/** Cell 12's phases: the setup, many pending at once, the rounds, the kill series. */
async function pendingRun(
  ctx: CellRun,
  t: Deno.TestContext,
  options: PendingHandoffsOptions,
): Promise<void> {
  startTallies(ctx);
  const started = performance.now();
  const settles = await settlingMethods(ctx);
  const db = ctx.run.store("handoffs");
  const start = await setUpHandoffs(ctx.target, db, settles);
  // Every kind of handoff at once, before any child changes one: the list judged as set up.
  if (!await judgeLife(ctx, t, { label: "setup", db, start, entries: [] })) return;
  // More pending at once than a page of a list holds, claimed ones among them.
  const many = ctx.run.store("many");
  const manyStart = await setUpManyPending(ctx.target, many);
  await judgeLife(ctx, t, { label: "many pending", db: many, start: manyStart, entries: [] });
  await handoffRounds(ctx, t, { db, start, rounds: options.rounds ?? 3 });
  const kind = seriesKind(options.killSeries);
  if (kind !== "off" && settles.complete && settles.fail) await handoffSeries(ctx, t, kind);
  else {ctx.note(
      "killSeries",
      kind === "off" ? "off" : "not run: the script needs both settling methods",
    );}
  ctx.note("elapsedMs", Math.round(performance.now() - started));
}
