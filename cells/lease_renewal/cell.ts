import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { raceSeriesOf } from "../moves/race.ts";
import { fencedRenewals } from "./fence.ts";
import { durableRenewal } from "./durable.ts";
import { renewalStops } from "./stops.ts";

/**
 * Options of {@linkcode leaseRenewalCell}.
 *
 * @example
 * ```ts
 * import { leaseRenewalCell, type LeaseRenewalOptions } from "./cell.ts";
 * const options: LeaseRenewalOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   leaseMs: 400,
 * };
 * for (const test of await leaseRenewalCell(options)) Deno.test(test);
 * ```
 */
export interface LeaseRenewalOptions extends CellOptions {
  /** The short lease the holders take (default 300 ms); the stale holder is stopped past it. */
  leaseMs?: number;
  /** The short lease the durable holder renews (default 1000 ms); the cell waits past it. */
  durableLeaseMs?: number;
}

/**
 * Cell 11, lease renewal: `refreshCompressionLock` by a holder whose lease lapsed fails and
 * changes nothing; a renewal that returned is durable.
 *
 * (a) A holder child takes the compression lock for a short lease and is frozen with
 * SIGSTOP (asserted stopped) past it; with nobody taking over, after another holder took
 * over for a long lease, or for a short one, the holder is continued and renews: the
 * renewal must return `false` (or throw a typed error) and change nothing: a third
 * holder takes the lapsed lock at once, or is refused while the new holder holds it and
 * takes it past the new holder's own expiry; the new holder's publish works. (b) A holder
 * named without `pid=` renews a short lease to a long one and is SIGKILLed right after the
 * acknowledgement: past the short lease another holder is still refused, while the lock
 * beside it, never renewed, lapses; a fresh process resumes as the holder (publish,
 * release, SIGKILL). (c) With the race series, the holder is stopped before each lock call
 * inside its renewal while another takes over once the lease lapsed: a renewal
 * acknowledged after a takeover that committed during the stop is a FAIL, and at least one
 * takeover must land during a stop. Every state read twice by fresh processes: the same,
 * invariants empty, integrity ok. Every leg.
 *
 * @param options Target, leg, leases.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { leaseRenewalCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await leaseRenewalCell({ target })) Deno.test(test);
 * ```
 */
export function leaseRenewalCell(options: LeaseRenewalOptions): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 11,
    // The stops inside the renewal load the recorder (LD_PRELOAD).
    preloads: true,
    run: (ctx, t) => renewalRun(ctx, t, options),
  }, options);
}

/** Cell 11's phases: the fenced renewals, the durable one, the stops inside it. */
async function renewalRun(
  ctx: CellRun,
  t: Deno.TestContext,
  options: LeaseRenewalOptions,
): Promise<void> {
  startTallies(ctx);
  const leaseMs = options.leaseMs ?? 300;
  const started = performance.now();
  await fencedRenewals(ctx, t, leaseMs);
  await durableRenewal(ctx, t, options.durableLeaseMs ?? 1_000);
  tally(ctx, "sigkills", 0);
  if (raceSeriesOf(options.raceSeries) === "locks") await renewalStops(ctx, t, leaseMs);
  ctx.note("elapsedMs", Math.round(performance.now() - started));
}
