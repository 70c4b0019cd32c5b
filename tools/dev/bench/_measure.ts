// The bench's rounds: statement rates, one child per implementation in turn, and append
// runs, every implementation of a round at once, taking turns in slices.
import { join } from "node:path";
import type { Config, Mode, Sync } from "./_config.ts";
import type { AppendResult, StmtJob, StmtResult } from "./_jobs.ts";
import { appendChild, denoChild, type Lib, type VariantKey, VARIANTS } from "./_children.ts";
import { type LiveChild, sliceSizes } from "./_protocol.ts";
import { type AppendRun, fmt } from "./_report.ts";

/** Each variant's rate in each round. */
export type Rates = Map<VariantKey, number[]>;

/** What an append scenario runs. */
export interface AppendScenario {
  mode: Mode;
  sync: Sync;
  /** Steps (transactions) per run. */
  n: number;
  /** Messages per transaction. */
  batch: number;
  warmup: number;
  /** The folder of its files (the work folder, or tmpfs). */
  dir: string;
}

/** What the rounds run on. */
export interface RoundsSetup {
  config: Readonly<Config>;
  /** Whether python3 with sqlite3 answered. */
  python: boolean;
  /** The fixed build's SQLite version, or undefined when it is not built. */
  fixedSqlite: string | undefined;
  log: (line: string) => void;
}

/** Rotates the order of implementations each round, so none always runs first. */
export function rotated<T>(items: readonly T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** Runs the rounds of a bench, naming every database file apart and keeping every run. */
export class Rounds {
  /** Every append run so far, for the report. */
  readonly appendRuns: AppendRun[] = [];
  #setup: RoundsSetup;
  #seq = 0;

  /** Rounds on `setup`. */
  constructor(setup: RoundsSetup) {
    this.#setup = setup;
  }

  #dbPath(dir: string, tag: string): string {
    return join(dir, `${String(++this.#seq).padStart(3, "0")}-${tag.replace(/[^\w.-]+/g, "_")}.db`);
  }

  /** Statement rates of the binding (on `bindingLib`) and node:sqlite, rounds alternating. */
  async statements(
    dir: string,
    bindingLib: Lib,
  ): Promise<Record<"binding" | "node", StmtResult[]>> {
    const { config, log } = this.#setup;
    const runs: Record<"binding" | "node", StmtResult[]> = { binding: [], node: [] };
    for (let round = 0; round < config.rounds; round++) {
      for (const impl of rotated(["binding", "node"] as const, round)) {
        log(`statements round ${round + 1}/${config.rounds}: ${impl}`);
        const job: StmtJob = {
          kind: "stmt",
          impl,
          path: this.#dbPath(dir, `stmt-${impl}`),
          rows: config.stmtRows,
          points: config.stmtPoints,
          ranges: config.stmtRanges,
        };
        runs[impl].push(
          await denoChild(job, impl === "binding" ? bindingLib : undefined) as StmtResult,
        );
      }
    }
    return runs;
  }

  /**
   * The rounds of one append scenario for the variants that can run here (Python when
   * it answered, the fixed build when it is built): each variant's messages per second.
   */
  async appends(label: string, scenario: AppendScenario, variants: VariantKey[]): Promise<Rates> {
    const { config, log, python, fixedSqlite } = this.#setup;
    const wanted = variants.filter((v) =>
      (VARIANTS[v].impl !== "python" || python) &&
      (VARIANTS[v].lib !== "fixed" || fixedSqlite !== undefined) &&
      (v !== "python-fixed" || Deno.build.os === "linux") // LD_PRELOAD
    );
    const results = new Map<VariantKey, AppendResult[]>(wanted.map((v) => [v, []]));
    for (let round = 0; round < config.rounds; round++) {
      // Every implementation of the round runs at once, idle but for its slice: slice
      // k runs them in a rotated order, so the disk's drift within a round and the
      // slot after another's commit hit all of them alike.
      const live: [VariantKey, LiveChild][] = [];
      try {
        for (const variant of rotated(wanted, round)) {
          const child = appendChild(variant, {
            path: this.#dbPath(scenario.dir, `${label}-${variant}`),
            mode: scenario.mode,
            sync: scenario.sync,
            n: scenario.n,
            slices: config.slices,
            batch: scenario.batch,
            warmup: scenario.warmup,
            jitWarmup: scenario.batch === 1 ? config.jitWarmup : config.jitWarmupBatches,
          });
          live.push([variant, child]);
          await child.ready(); // warm up one at a time
        }
        const sizes = sliceSizes(scenario.n, config.slices);
        for (let k = 0; k < sizes.length; k++) {
          for (const [, child] of rotated(live, k)) await child.slice(sizes[k]!);
        }
        for (const [variant, child] of live) {
          const result = await child.finish() as AppendResult;
          if (result.journalMode !== scenario.mode || result.synchronous !== scenario.sync) {
            throw new Error(
              `${variant} ran ${result.journalMode}/${result.synchronous}, not ${scenario.mode}/${scenario.sync}`,
            );
          }
          const version = VARIANTS[variant].lib === "fixed" ? fixedSqlite : undefined;
          if (version && result.sqlite !== version) {
            throw new Error(`${variant} ran SQLite ${result.sqlite}, not the fixed ${version}`);
          }
          results.get(variant)!.push(result);
          log(
            `${label} round ${round + 1}/${config.rounds}: ${variant} ${
              fmt(result.messages / result.seconds)
            } msgs/s`,
          );
        }
      } finally {
        for (const [, child] of live) child.kill();
      }
    }
    const rates: Rates = new Map();
    for (const [variant, list] of results) {
      const r = list.map((x) => x.messages / x.seconds);
      rates.set(variant, r);
      this.appendRuns.push({ label, variant, rates: r, results: list });
    }
    return rates;
  }
}
