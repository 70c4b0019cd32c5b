// The bench's arithmetic: spreads, ratios pair by pair, and the verdicts against targets,
// with parity judged against the A/A control's resolution.
import { median } from "../../../internal/stats.ts";

/** (max - min) / median of the rounds, or undefined with fewer than two. */
export function spread(values: readonly number[] | undefined): number | undefined {
  if (!values || values.length < 2) return undefined;
  return (Math.max(...values) - Math.min(...values)) / median(values);
}

/** `a / b`, or undefined when either is unknown or `b` is 0. */
export function ratio(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined || b === 0 ? undefined : a / b;
}

/** Each round's ratio a[r] / b[r], or undefined when the rounds do not pair up. */
function roundRatios(
  a: readonly number[] | undefined,
  b: readonly number[] | undefined,
): number[] | undefined {
  if (!a?.length || !b?.length || a.length !== b.length) return undefined;
  return a.map((x, i) => x / b[i]!);
}

/**
 * The median of the per-round ratios a[r] / b[r]: the implementations of one round ran
 * interleaved, so a drift of the disk between rounds cancels out of each pair. Rounds
 * that do not pair up give the ratio of the medians.
 */
export function pairRatio(
  a: readonly number[] | undefined,
  b: readonly number[] | undefined,
): number | undefined {
  const ratios = roundRatios(a, b);
  return ratios ? median(ratios) : ratio(a && median(a), b && median(b));
}

/**
 * How far from 1.00x the method reads when nothing differs: Python against an identical
 * Python child in the same rounds (the A/A control).
 */
export interface Resolution {
  /** The A/A control's ratio (median of the per-round ratios). */
  ratio: number;
  /**
   * (max - min) / median of its per-round ratios; undefined with one round (then the
   * ratio alone is the bound).
   */
  spread: number | undefined;
}

/** The A/A control's resolution from the rounds of a control and its reference. */
export function resolution(
  control: readonly number[] | undefined,
  reference: readonly number[] | undefined,
): Resolution | undefined {
  const controlRatio = pairRatio(control, reference);
  if (controlRatio === undefined) return undefined;
  return { ratio: controlRatio, spread: spread(roundRatios(control, reference)) };
}

/** The lowest ratio that can count as parity, whatever the A/A control reads. */
export const PARITY_FLOOR = 0.97;

/**
 * Whether a ratio below its target is parity within the method's resolution: it is at
 * least {@linkcode PARITY_FLOOR} and not below the A/A control's ratio minus its spread.
 */
export function withinResolution(value: number, control: Resolution): boolean {
  return value >= PARITY_FLOOR && value >= control.ratio - (control.spread ?? 0);
}

/** The verdict on a row that passes only by parity. */
export const PARITY_PASS = "PASS (parity within resolution)";

/**
 * One target of a row: its name, the measured ratio, the minimum, and for a target of
 * parity (ours vs Python) the A/A control that may excuse a ratio just below it.
 */
export type Check = [
  name: string,
  ratio: number | undefined,
  min: number,
  parity?: Resolution | undefined,
];

/**
 * A row's verdict: `FAIL (names)` when a ratio misses its minimum and is not parity
 * within the A/A control's resolution, `PASS (parity within resolution)` when a ratio
 * passed only that way, `PASS` when every known ratio reaches its minimum, `-` when
 * none is known.
 *
 * @example
 * ```ts ignore
 * verdict([["Py", 0.98, 1.0, { ratio: 0.996, spread: 0.03 }]]); // "PASS (parity within resolution)"
 * verdict([["Py", 0.975, 1.0, { ratio: 1.0, spread: 0.01 }]]); // "FAIL (Py)"
 * ```
 */
export function verdict(checks: readonly Check[]): string {
  if (checks.every(([, r]) => r === undefined)) return "-";
  const missed: string[] = [];
  let parity = false;
  for (const [name, value, min, control] of checks) {
    if (value === undefined || value >= min) continue;
    if (control && withinResolution(value, control)) parity = true;
    else missed.push(name);
  }
  if (missed.length) return `FAIL (${missed.join(", ")})`;
  return parity ? PARITY_PASS : "PASS";
}

/** PASS when `value` is below `max`, FAIL otherwise, `-` when unknown. */
export function below(value: number | undefined, max: number): string {
  return value === undefined || !Number.isFinite(value) ? "-" : value < max ? "PASS" : "FAIL";
}

/** PASS when `value` is at least `min`, FAIL otherwise, `-` when unknown. */
export function atLeast(value: number | undefined, min: number): string {
  return value === undefined || !Number.isFinite(value) ? "-" : value >= min ? "PASS" : "FAIL";
}
