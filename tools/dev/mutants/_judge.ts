// How `deno task mutants` judges a run: the mark of each cell, the verdict of each
// target on each leg, the verdict of each mutant over its legs, and the score.
//
// A SKIP is never evidence: it never counts as caught. An ERROR (a HarnessError: the suite
// failed, e.g. a kill that did not land) is never a verdict: it is never caught, never a
// false alarm, and any ERROR fails the task. A mutant whose intended cells
// SKIPPED on every leg it ran is "not judged", which fails the task. Planted mutants must
// be caught by their intended cell for the intended reason (the catalogue's clause);
// generated ones by any FAIL of an intended cell (no exact clause can be known for a
// mutant written by a program).
import type { LegName } from "../../../harness/legs.ts";
import type { MutantSpec } from "../../../cells/testdata/mutants/catalogue.ts";
import type { Family, GeneratedMutant } from "../../../cells/testdata/mutants/generated.ts";
import type { JobCell } from "./_worker.ts";

/** What a matrix cell shows. */
export type Mark = "caught" | "survived" | "skipped" | "pass" | "other" | "FAIL" | "ERROR";

/** One target run: a mutant (planted or generated) or the alt store, on one leg. */
export interface Job {
  name: string;
  planted?: MutantSpec;
  generated?: GeneratedMutant;
  target: string;
  cells: readonly number[];
  leg: LegName;
  library: { label: string; path: string };
  /** The cells' options for a correct store's run (e.g. its race series). */
  options?: Record<string, unknown>;
}

/** What a worker returned. */
export interface JobOutcome {
  cells: JobCell[];
  sqliteVersion?: string;
  seconds: number;
  error?: string;
}

/** The verdict of one target on one leg. */
export type Verdict =
  | "killed"
  | "survived"
  | "not judged"
  | "equivalent"
  | "skipped"
  | "ok"
  | "false alarm"
  | "error";

/** One target on one leg, judged. */
export interface Row {
  target: string;
  kind: "planted" | "generated" | "alt store";
  family?: Family | "planted";
  breaks?: string;
  intended: number[];
  expect?: MutantSpec["expect"];
  equivalent?: string;
  leg: LegName;
  library: string;
  sqliteVersion?: string;
  seconds: number;
  cells: Record<number, JobCell & { mark: Mark; intended: boolean }>;
  /**
   * `killed`; `survived`; `not judged` (its intended cells all skipped on this leg);
   * `equivalent` (a declared equivalent no cell failed on); `skipped` (a leg mutant
   * skipped as required); alt store: `ok` or `false alarm`; `error`: the suite failed
   * (a cell's ERROR, or the worker gave no result) and no intended cell caught it.
   */
  verdict: Verdict;
  error?: string;
}

function markOf(job: Job, c: JobCell, isIntended: boolean): Mark {
  if (c.status === "ERROR") return "ERROR";
  const spec = job.planted;
  if (!spec && !job.generated) {
    return c.status === "FAIL" ? "FAIL" : c.status === "PASS" ? "pass" : "skipped";
  }
  if (c.status === "SKIP") {
    // A leg mutant must be skipped, for the reason its clause names.
    if (spec?.expect === "skipped" && isIntended) {
      return spec.clause.test(c.detail ?? "") ? "skipped" : "other";
    }
    return "skipped";
  }
  if (c.status === "PASS") return isIntended ? "survived" : "pass";
  if (spec?.expect === "skipped" && isIntended) return "other";
  return isIntended && spec && !spec.clause.test(c.detail ?? "") ? "other" : "caught";
}

/**
 * Classifies one target's cells and gives its verdict on this leg.
 *
 * @param job The run.
 * @param result What the worker returned.
 * @returns The row.
 */
export function judge(job: Job, result: JobOutcome): Row {
  const spec = job.planted;
  const generated = job.generated;
  const intended: number[] = [...(spec?.cells ?? generated?.cells ?? [])];
  const cells: Row["cells"] = {};
  for (const c of result.cells) {
    const isIntended = intended.includes(c.cell);
    cells[c.cell] = { ...c, mark: markOf(job, c, isIntended), intended: isIntended };
  }
  const marks = intended.map((c) => cells[c]?.mark);
  const errored = !!result.error || Object.values(cells).some((c) => c.mark === "ERROR");
  let verdict: Verdict;
  if (!spec && !generated) {
    verdict = Object.values(cells).some((c) => c.mark === "FAIL")
      ? "false alarm"
      : errored
      ? "error"
      : "ok";
  } else if (result.error) verdict = "error";
  else if (spec?.expect === "skipped") {
    verdict = marks.every((m) => m === "skipped") ? "skipped" : errored ? "error" : "survived";
  } else if (marks.some((m) => m === "ERROR") && !marks.some((m) => m === "caught")) {
    // Nothing caught it, and the suite failed somewhere: no verdict either way.
    verdict = "error";
  } else if (marks.every((m) => m === "skipped")) verdict = "not judged";
  else if (spec) {
    // Planted: every intended cell that ran caught it, for the intended reason.
    verdict = marks.every((m) => m === "caught" || m === "skipped") ? "killed" : "survived";
  } else {
    // Generated: any intended cell failing is a kill (a declared equivalent that is
    // killed is shown as killed, and reported: the declaration is wrong).
    const caught = marks.some((m) => m === "caught");
    verdict = caught ? "killed" : generated?.equivalent ? "equivalent" : "survived";
  }
  const version = result.sqliteVersion;
  return {
    target: job.name,
    kind: spec ? "planted" : generated ? "generated" : "alt store",
    ...(spec || generated ? { family: generated?.family ?? "planted" } : {}),
    ...(spec ? { breaks: spec.breaks, expect: spec.expect } : {}),
    ...(generated ? { breaks: generated.breaks } : {}),
    ...(generated?.equivalent ? { equivalent: generated.equivalent } : {}),
    intended,
    leg: job.leg,
    library: job.library.label,
    ...(version ? { sqliteVersion: version } : {}),
    seconds: Number(result.seconds.toFixed(1)),
    cells,
    verdict,
    ...(result.error ? { error: result.error } : {}),
  };
}

/**
 * The kill matrix of one leg and library.
 *
 * @param rows Its rows.
 * @param cellIds The cell columns.
 * @returns The table's text.
 */
export function table(rows: Row[], cellIds: readonly number[]): string {
  const head = ["target", ...cellIds.map((c) => `cell ${c}`), "verdict"];
  const body = rows.map((r) => [
    r.kind === "alt store" ? `${r.target} (correct)` : r.target,
    ...cellIds.map((c) => {
      const cell = r.cells[c];
      if (!cell) return "-";
      return `${cell.mark}${cell.intended ? " *" : ""}`;
    }),
    r.verdict,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
}

/** The verdict of each mutant over every leg it ran on, and the score. */
export interface Score {
  /** Killed on every leg that judged it, and judged at least once. */
  killed: string[];
  /** Survived (or caught for another reason) on some leg. */
  survivors: string[];
  /** Its intended cells skipped on every leg it ran: a failure, since a SKIP is no evidence. */
  unjudged: string[];
  /** Declared equivalent, and no cell failed on it. */
  equivalents: string[];
  /** Declared equivalent, yet an intended cell failed: the declaration is wrong. */
  wronglyEquivalent: string[];
  /** Leg mutants skipped as required (not counted as caught). */
  legSkipped: string[];
  /** Leg mutants not skipped as required. */
  legFailed: string[];
  /** Targets (mutants and correct stores) on which a cell ended in ERROR: the task fails. */
  errored: string[];
  /** K/N per family (planted, split, where, ...). */
  perFamily: Record<string, { killed: number; judged: number }>;
}

/**
 * Each mutant's verdict over its legs.
 *
 * @param rows Every row.
 * @returns The score.
 */
export function score(rows: Row[]): Score {
  const mutants = new Map<string, Row[]>();
  for (const row of rows) {
    if (row.kind !== "alt store") mutants.set(row.target, [...mutants.get(row.target) ?? [], row]);
  }
  const out: Score = {
    killed: [],
    survivors: [],
    unjudged: [],
    equivalents: [],
    wronglyEquivalent: [],
    legSkipped: [],
    legFailed: [],
    errored: [],
    perFamily: {},
  };
  // Any harness error, on any target and leg, is reported and fails the task.
  for (const row of rows) {
    const erred = row.error || Object.values(row.cells).some((c) => c.mark === "ERROR");
    const name = `${row.target} (${row.library} ${row.leg})`;
    if (erred && !out.errored.includes(name)) out.errored.push(name);
  }
  for (const [name, legs] of mutants) {
    const first = legs[0]!;
    const verdicts = legs.map((r) => r.verdict);
    if (first.expect === "skipped") {
      (verdicts.every((v) => v === "skipped") ? out.legSkipped : out.legFailed).push(name);
      continue;
    }
    if (first.equivalent) {
      if (verdicts.includes("killed")) out.wronglyEquivalent.push(name);
      else if (!verdicts.includes("error")) out.equivalents.push(name);
      continue;
    }
    const family = (out.perFamily[first.family!] ??= { killed: 0, judged: 0 });
    family.judged++;
    // An ERROR is never a kill: a mutant with one on some leg is not counted in K.
    if (verdicts.includes("error")) continue;
    if (verdicts.every((v) => v === "not judged")) out.unjudged.push(name);
    else if (verdicts.every((v) => v === "killed" || v === "not judged")) {
      out.killed.push(name);
      family.killed++;
    } else out.survivors.push(name);
  }
  return out;
}
