/**
 * `deno task powerloss`: SQLite's documented durability table, reproduced by the
 * power-loss tier. Cell 1's writer commits its appends at each `synchronous` level
 * (`cells/testdata/synchronous_target.ts`, `SESSION_DB_SYNCHRONOUS`) in each journal mode
 * (DELETE, WAL), runs under the LD_PRELOAD file-system call recorder, and is SIGKILLed,
 * alternately at the acknowledgement instant and at a random moment. For each cell it
 * prints the most acknowledged appends missing from one power-loss state (every sync
 * point of the run, under the persistence profile), the runs that lost any, the crash
 * states that did not recover to a valid database, and how many states were checked
 * (`N states in S s (R states/s)`). Then the cost: appends per second of the same writer
 * without and with the recorder (the recording overhead), per setting (the store's
 * policy cost).
 *
 * The whole run uses one library: `DENO_SQLITE_PATH` when set, else the WAL-reset-fixed
 * build (`deno task sqlite`; WAL needs it, the system SQLite keeps new files in DELETE).
 *
 * Flags: see `deno task powerloss --help` ({@linkcode POWERLOSS_CLI}). Exits 1 when the
 * table departs from the documentation: a loss with DELETE/EXTRA or WAL/FULL or EXTRA,
 * corruption other than with OFF, or a run where the recorder missed a write.
 *
 * @module
 */
import { endRun, fail, FLAGS, legListArg, parseFlags, startRun, type ToolSpec } from "../_cli.ts";
import { columns } from "../_table.ts";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";
import type { Leg, LegName } from "../../harness/legs.ts";
import { RunDir } from "../../harness/evidence.ts";
import { scopedPermissions } from "../../harness/permissions.ts";
import type { PowerLossKill, PowerLossRun } from "../../cells/power_loss/mod.ts";
import { median } from "../../internal/stats.ts";
import { fixedSqlitePath } from "../../runner/sqlite_build.ts";
import { explicitLibraryPath } from "../../session_db/sqlite/library.ts";
import { buildRecorder } from "../../recorder/build.ts";
import { type Profile, PROFILES } from "../../recorder/crash_states.ts";
import { denoCacheDir, recorderEnv } from "../../recorder/record.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TARGET = new URL("../../cells/testdata/synchronous_target.ts", import.meta.url).href;
const BENCH_CHILD = new URL("./_powerloss_bench.ts", import.meta.url).href;
const LEVELS = ["OFF", "NORMAL", "FULL", "EXTRA"] as const;
const BENCH_ROUNDS = 5;
type Level = typeof LEVELS[number];
type Mode = "delete" | "wal";

/** SQLite's documentation, per cell: what a power loss may do. */
const EXPECTED: Record<Mode, Record<Level, string>> = {
  delete: {
    OFF: "loses, may corrupt",
    NORMAL: "may lose the last commit, may corrupt",
    FULL: "may lose the last commit",
    EXTRA: "durable",
  },
  wal: {
    OFF: "loses, may corrupt",
    NORMAL: "loses",
    FULL: "durable",
    EXTRA: "durable",
  },
};

/** The largest seed, as the cells draw them (31-bit). */
const MAX_SEED = 2 ** 31 - 1;

/** The tool's command line (its `--help`). */
export const POWERLOSS_CLI: ToolSpec = {
  usage: "deno task powerloss",
  summary: `Reproduces SQLite's documented durability table with the power-loss tier: cell 1's
writer commits at each synchronous level in each journal mode under the LD_PRELOAD recorder
and is SIGKILLed (alternately at the acknowledgement instant and at a random moment);
prints per setting the most acknowledged appends missing from one power-loss state and the
corrupt crash states, then the recording's cost. One library: DENO_SQLITE_PATH, else the
fixed build (deno task sqlite). Linux/glibc with cc only; elsewhere it SKIPs (exit 0).`,
  flags: [
    { name: "--runs", value: "N", help: "runs per setting", default: "4" },
    { name: "--acks", value: "N", help: "acknowledged appends before the kill", default: "100" },
    {
      name: "--subsets",
      value: "N",
      help: "random states per crash instant (half torn)",
      default: "12",
    },
    { name: "--instants", value: "N", help: "only the last N sync points of a run" },
    { name: "--profile", value: "NAME", help: "posix or ext4-ordered", default: "posix" },
    {
      ...FLAGS.legs,
      help: "journal-mode legs: this table's rows are delete and wal",
      default: "delete,wal",
    },
    { name: "--levels", value: "LIST", help: "synchronous levels", default: LEVELS.join(",") },
    {
      name: "--bench",
      value: "N",
      help: "appends per overhead round; 0 skips the bench",
      default: "300",
    },
    { ...FLAGS.seed, help: "the first run's seed (run r adds r * 1000)" },
    {
      name: "--json",
      value: "PATH",
      help: "the JSON report",
      default: ".cache/powerloss/report.json",
    },
  ],
  exitCodes: {
    0: "the table matches SQLite's documentation",
    1: "a loss or corruption SQLite does not allow, a recorder that missed a write, or a survivor",
  },
};

function profileArg(value: string): Profile {
  if (!(PROFILES as readonly string[]).includes(value)) {
    fail(`Invalid --profile "${value}": use ${PROFILES.join(" or ")}`);
  }
  return value as Profile;
}

function parseArgs(args: readonly string[]) {
  const flags = parseFlags(POWERLOSS_CLI, args);
  const modes = flags.has("--legs") ? legListArg(flags.string("--legs")!) : ["delete", "wal"];
  for (const m of modes) {
    if (m !== "delete" && m !== "wal") fail(`Invalid leg "${m}" in --legs: use delete and/or wal`);
  }
  const levels = (flags.list("--levels") ?? [...LEVELS]).map((l) => l.toUpperCase());
  if (levels.length === 0) fail(`Invalid --levels: name some of ${LEVELS.join(", ")}`);
  for (const l of levels) {
    if (!(LEVELS as readonly string[]).includes(l)) {
      fail(`Unknown level "${l}": use ${LEVELS.join(", ")}`);
    }
  }
  return {
    runs: flags.int("--runs", 1) ?? 4,
    acks: flags.int("--acks", 1) ?? 100,
    subsets: flags.int("--subsets") ?? 12,
    instants: flags.int("--instants", 1),
    profile: profileArg(flags.string("--profile") ?? "posix"),
    modes: modes as Mode[],
    levels: levels as Level[],
    bench: flags.int("--bench") ?? 300,
    seed: flags.int("--seed", 0, MAX_SEED),
    json: resolve(flags.string("--json") ?? join(ROOT, ".cache/powerloss/report.json")),
  };
}

interface Cell {
  mode: Mode;
  level: Level;
  runs: number;
  acknowledged: number;
  lost: number;
  runsLosing: number;
  losingStates: number;
  corruptStates: number;
  statesChecked: number;
  firstProblem?: string;
  honoured: boolean;
  expected: string;
}

interface BenchRow {
  mode: Mode;
  level: Level;
  plainPerSecond: number;
  recordedPerSecond: number;
  /** Wall-clock ratio plain / recorded rate. */
  overhead: number;
  /** CPU time per append (user + system), microseconds. */
  plainCpuMicros: number;
  recordedCpuMicros: number;
}

/** One bench round in a child: `n` appends through the writer, with or without recording. */
async function benchRound(
  recorder: string,
  library: string,
  mode: Mode,
  level: Level,
  n: number,
  recorded: boolean,
): Promise<{ perSecond: number; cpuMicros: number }> {
  const dir = await Deno.makeTempDir({ prefix: "powerloss-bench-" });
  try {
    Deno.mkdirSync(join(dir, "db"));
    const env: Record<string, string> = {
      DENO_SQLITE_PATH: library,
      SESSION_DB_JOURNAL_MODE: mode,
      SESSION_DB_SYNCHRONOUS: level,
      NO_COLOR: "1",
      ...(recorded
        ? recorderEnv({
          library: recorder,
          watched: join(dir, "db"),
          log: join(dir, "fs.log"),
          data: true,
          ignore: [dir, denoCacheDir()],
        })
        : {}),
    };
    for (const name of ["DENO_DIR", "HOME", "PATH"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    }
    // Both variants get the same permissions: only the preloaded recorder differs.
    const args = [
      "run",
      "--no-config",
      "--no-lock",
      ...scopedPermissions({
        read: [ROOT, dir],
        write: dir,
        ffi: undefined,
        env: Object.keys(env),
      }),
      BENCH_CHILD,
      TARGET,
      join(dir, "db", "store.db"),
      String(n),
    ];
    const out = await new Deno.Command(Deno.execPath(), { args, clearEnv: true, env, cwd: dir })
      .output();
    const text = new TextDecoder().decode(out.stdout).trim();
    if (!out.success) {
      throw new Error(
        `bench child failed (${out.code}): ${new TextDecoder().decode(out.stderr).slice(-500)}`,
      );
    }
    const { ms, cpuMicros } = JSON.parse(text.split("\n").at(-1)!) as {
      ms: number;
      cpuMicros: number;
    };
    return { perSecond: n / (ms / 1000), cpuMicros: cpuMicros / n };
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const table = (head: string[], rows: string[][]) => columns(head, rows).join("\n");

if (import.meta.main) {
  const options = parseArgs(Deno.args);
  startRun();
  // One library for the writers and for this checking process, set before anything
  // loads SQLite.
  let library = explicitLibraryPath();
  if (!library) {
    library = fixedSqlitePath();
    try {
      Deno.statSync(library);
    } catch {
      fail(
        `Cannot run the power-loss table: the fixed SQLite ${library} is not built (run deno task sqlite, or set DENO_SQLITE_PATH to a SQLite >= 3.51.3 for the WAL rows)`,
      );
    }
    Deno.env.set("DENO_SQLITE_PATH", library);
  }
  const { sqliteVersion } = await import("../../session_db/sqlite/database.ts");
  const { powerLossPrefixRun } = await import("../../cells/prefix_durability/power_loss.ts");
  const version = sqliteVersion();
  const built = await buildRecorder();
  if (!built.ok) {
    console.log(`SKIP: ${built.reason}`);
    Deno.exit(0);
  }
  console.log(`powerloss: SQLite ${version} (${library}), profile ${options.profile}`);

  const cells: Cell[] = [];
  const runs: (PowerLossRun & { mode: Mode; level: Level })[] = [];
  const started = performance.now();
  for (const mode of options.modes) {
    // The checker's own resolver reads crash states in the row's mode.
    Deno.env.set("SESSION_DB_JOURNAL_MODE", mode);
    const leg: Leg = { name: mode as LegName, library, sqliteVersion: version };
    for (const level of options.levels) {
      const cell: Cell = {
        mode,
        level,
        runs: 0,
        acknowledged: 0,
        lost: 0,
        runsLosing: 0,
        losingStates: 0,
        corruptStates: 0,
        statesChecked: 0,
        honoured: true,
        expected: EXPECTED[mode][level],
      };
      for (let r = 0; r < options.runs; r++) {
        const kill: PowerLossKill = r % 2 === 0 ? "ack" : "random";
        const dir = await RunDir.create(`powerloss-${mode}-${level}`);
        const run = await powerLossPrefixRun({
          leg,
          target: TARGET,
          dir: dir.path,
          kill,
          minAcknowledged: options.acks,
          subsets: options.subsets,
          profile: options.profile,
          ...(options.instants !== undefined ? { instants: options.instants } : {}),
          env: { SESSION_DB_SYNCHRONOUS: level },
          ...(options.seed !== undefined ? { seed: options.seed + r * 1000 } : {}),
        });
        runs.push({ ...run, mode, level });
        cell.runs++;
        cell.acknowledged += run.acknowledged;
        cell.lost = Math.max(cell.lost, run.lost);
        cell.losingStates += run.losingStates;
        if (run.losingStates > 0) cell.runsLosing++;
        cell.corruptStates += run.corruptStates;
        cell.statesChecked += run.statesChecked;
        cell.honoured &&= run.honoured.ok;
        if (run.firstProblem && !cell.firstProblem) cell.firstProblem = run.firstProblem;
        if (run.fullLost > 0 || run.fidelity) {
          console.error(
            `powerloss: ${mode}/${level} run ${r}: ${run.fullLost} lost after a plain SIGKILL, fidelity ${run.fidelity}; evidence kept in ${dir.path}`,
          );
          await dir.finish(false, { ...run });
        } else await dir.finish(true, {});
      }
      cells.push(cell);
      console.log(
        `${mode.padEnd(6)} ${
          level.padEnd(6)
        }: up to ${cell.lost} acknowledged lost in a state, ${cell.losingStates} of ${cell.statesChecked} states losing (${cell.runsLosing}/${cell.runs} runs), ${cell.corruptStates} corrupt${
          cell.honoured ? "" : " [mode not honoured]"
        }`,
      );
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const totalStates = cells.reduce((n, c) => n + c.statesChecked, 0);

  const bench: BenchRow[] = [];
  if (options.bench > 0) {
    for (const mode of options.modes) {
      for (const level of options.levels) {
        const plain: { perSecond: number; cpuMicros: number }[] = [];
        const recorded: typeof plain = [];
        // Alternating, in both orders: the disk's fsync latency drifts under load.
        for (let round = 0; round < BENCH_ROUNDS; round++) {
          const pair = [false, true];
          if (round % 2) pair.reverse();
          for (const withRecorder of pair) {
            (withRecorder ? recorded : plain).push(
              await benchRound(built.path, library, mode, level, options.bench, withRecorder),
            );
          }
        }
        const plainRate = median(plain.map((r) => r.perSecond));
        const recordedRate = median(recorded.map((r) => r.perSecond));
        const row: BenchRow = {
          mode,
          level,
          plainPerSecond: plainRate,
          recordedPerSecond: recordedRate,
          overhead: plainRate / recordedRate,
          plainCpuMicros: median(plain.map((r) => r.cpuMicros)),
          recordedCpuMicros: median(recorded.map((r) => r.cpuMicros)),
        };
        bench.push(row);
        console.log(
          `bench ${mode.padEnd(6)} ${level.padEnd(6)}: ${Math.round(row.plainPerSecond)}/s plain, ${
            Math.round(row.recordedPerSecond)
          }/s recorded (${row.overhead.toFixed(2)}x); CPU ${Math.round(row.plainCpuMicros)} vs ${
            Math.round(row.recordedCpuMicros)
          } µs per append`,
        );
      }
    }
  }

  console.log(
    `\nPower-loss table: SQLite ${version}, ${options.runs} runs per cell (kills alternate: acknowledgement instant, random), >= ${options.acks} acknowledged appends per run, profile ${options.profile}; ${totalStates} states in ${
      seconds.toFixed(2)
    } s (${Math.round(totalStates / seconds)} states/s; load average ${
      Deno.loadavg()[0]!.toFixed(2)
    })\n`,
  );
  console.log(table(
    [
      "mode",
      "synchronous",
      "acknowledged",
      "most lost in a state",
      "losing states",
      "runs losing",
      "corrupt states",
      "states checked",
      "SQLite documents",
    ],
    cells.map((c) => [
      c.mode.toUpperCase(),
      c.level,
      String(c.acknowledged),
      String(c.lost),
      String(c.losingStates),
      `${c.runsLosing}/${c.runs}`,
      String(c.corruptStates),
      String(c.statesChecked),
      c.expected + (c.honoured ? "" : " (mode not honoured)"),
    ]),
  ));
  if (bench.length) {
    console.log(
      `\nAppends per second, one transaction each, and CPU per append (${options.bench} appends, median of ${BENCH_ROUNDS} alternating rounds):\n`,
    );
    console.log(table(
      [
        "mode",
        "synchronous",
        "plain /s",
        "recorded /s",
        "overhead",
        "CPU µs plain",
        "CPU µs recorded",
      ],
      bench.map((b) => [
        b.mode.toUpperCase(),
        b.level,
        String(Math.round(b.plainPerSecond)),
        String(Math.round(b.recordedPerSecond)),
        `${b.overhead.toFixed(2)}x`,
        String(Math.round(b.plainCpuMicros)),
        String(Math.round(b.recordedCpuMicros)),
      ]),
    ));
  }
  const problems = cells.filter((c) => c.firstProblem).map((c) =>
    `${c.mode}/${c.level}: ${c.firstProblem!.slice(0, 200)}`
  );
  if (problems.length) console.log(`\nFirst inconsistency per cell:\n${problems.join("\n")}`);
  // Nothing the run started may still be running: a survivor fails it, named.
  const survivors = await endRun("powerloss");
  await Deno.mkdir(dirname(options.json), { recursive: true });
  await Deno.writeTextFile(
    options.json,
    JSON.stringify(
      { sqliteVersion: version, library, options, cells, bench, runs, survivors },
      null,
      2,
    ) +
      "\n",
  );
  console.log(`\nreport: ${options.json}`);
  // A regression of the documented table fails the task: loss where SQLite promises
  // durability, corruption other than with OFF, or a recorder that missed something.
  const regressions = [
    ...cells.filter((c) => c.expected === "durable" && c.lost > 0).map((c) =>
      `${c.mode}/${c.level} lost ${c.lost} acknowledged appends`
    ),
    // SQLite documents that NORMAL in a rollback mode may corrupt at a power loss.
    ...cells.filter((c) =>
      c.level !== "OFF" && !(c.mode === "delete" && c.level === "NORMAL") && c.corruptStates > 0
    ).map((c) => `${c.mode}/${c.level} left ${c.corruptStates} corrupt states`),
    ...runs.filter((r) => r.fullLost > 0 || r.fidelity).map((r) =>
      `${r.mode}/${r.level} ${r.kill} kill: ${r.fullLost} lost after a plain SIGKILL, fidelity ${r.fidelity}`
    ),
  ];
  if (regressions.length) {
    console.error(
      `\npowerloss: the table departs from SQLite's documentation:\n${regressions.join("\n")}`,
    );
    Deno.exit(1);
  }
  if (survivors.length) Deno.exit(1);
}
