/**
 * The syscall tier for any store: runs a simple append program (m0..m(N-1), one
 * acknowledgement after each returned) under the file-system call recorder and judges
 * cell 1's clause on every crash state, in-process.
 *
 * - `--mode power-loss`: one recorded run (with data); the states a power loss at every
 *   sync point may leave under `--profile`.
 * - `--mode crash`: the state a SIGKILL before each recorded call leaves (from the same
 *   log: the page cache keeps every completed call), plus `--kills` real SIGKILL children
 *   (`FSREC_CRASH_AT=k`), each asserted killed with exactly k-1 calls recorded.
 *
 * Prints `N states in S s (R states/s)`; exits 1 on a failed state with the command that
 * replays it from the kept run folder.
 *
 * @module
 */
import { loadTarget, type StoreOptions, targetSpecifier } from "../cells/target.ts";
import { buildRecorder } from "../recorder/build.ts";
import {
  type CrashState,
  killStates,
  powerLossStates,
  type Profile,
  PROFILES,
} from "../recorder/crash_states.ts";
import { readFolder, writeImage } from "../recorder/image.ts";
import { logProblems, readLog } from "../recorder/log.ts";
import { CRASH_KINDS, type CrashKind, denoCacheDir, recorderEnv } from "../recorder/record.ts";
import { fromFileUrl } from "../internal/path.ts";
import { exists } from "../internal/fs.ts";
import { AppendOracle } from "./_syscalls_oracle.ts";
import { fail, parseFlags, type ToolSpec } from "./_cli.ts";

/** The tool's command line (its `--help`). */
export const SYSCALLS_CLI: ToolSpec = {
  usage: "deno task syscalls",
  summary: `Runs an append program for a target under the file-system call recorder (an
LD_PRELOAD object) and checks that every acknowledged append survives each crash state:
SIGKILL before every recorded call (crash), or power loss at every sync point under a
persistence profile (power-loss). Linux/glibc with cc only; elsewhere it SKIPs (exit 0).`,
  flags: [
    {
      name: "--target",
      value: "MODULE",
      help: "the store's target module",
      default: "the reference store",
    },
    { name: "--mode", value: "MODE", help: "crash or power-loss", default: "power-loss" },
    {
      name: "--profile",
      value: "NAME",
      help: "posix or ext4-ordered (power-loss)",
      default: "posix",
    },
    { name: "--appends", value: "N", help: "appends in the recorded run", default: "20" },
    {
      name: "--journal-mode",
      value: "MODE",
      help: "the leg: wal or delete (SESSION_DB_JOURNAL_MODE)",
    },
    {
      name: "--kills",
      value: "N",
      help: "real SIGKILL children in crash mode (all: every k)",
      default: "8",
    },
    {
      name: "--crash-kind",
      value: "KIND",
      help: "calls a crash point counts: any, write, sync, name",
      default: "any",
    },
    {
      name: "--samples",
      value: "N",
      help: "random power-loss states per sync point",
      default: "12",
    },
    { name: "--seed", value: "N", help: "the first seed of the random states", default: "1" },
    { name: "--from", value: "DIR", help: "judge a kept run folder again instead of recording" },
    { name: "--state", value: "N", help: "judge only state N and leave its files in DIR/state-N" },
    { name: "--keep", help: "keep the run folder even when every state passes" },
    { name: "--json", value: "PATH", help: "also write the verdict as JSON there" },
  ],
  exitCodes: {
    0: "every state passed, or SKIP (the reason is printed)",
    1: "a state failed, or the run could not be judged",
  },
};

const CHILD = fromFileUrl(new URL("./_syscalls_child.ts", import.meta.url));
const SESSION = "s1";
const DB_NAME = "store.db";

interface Run {
  dir: string;
  target: string;
  journalMode?: "wal" | "delete";
}

function childEnv(run: Run, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = { ...Deno.env.toObject(), NO_COLOR: "1", ...extra };
  if (run.journalMode) env.SESSION_DB_JOURNAL_MODE = run.journalMode;
  return env;
}

async function child(
  run: Run,
  args: string[],
  env: Record<string, string>,
): Promise<Deno.CommandOutput> {
  return await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-lock",
      "-A",
      "--unstable-kv",
      CHILD,
      args[0]!,
      run.target,
      `${run.dir}/db/${DB_NAME}`,
      SESSION,
      ...args.slice(1),
    ],
    env: childEnv(run, env),
    stdout: "piped",
    stderr: "piped",
  }).output();
}

function stderrOf(output: Deno.CommandOutput): string {
  return new TextDecoder().decode(output.stderr).trim().split("\n").slice(-6).join("\n");
}

/** Creates the session in a fresh folder and keeps it as the durable baseline. */
async function setup(run: Run): Promise<void> {
  Deno.mkdirSync(`${run.dir}/db`, { recursive: true });
  const output = await child(run, ["setup"], {});
  if (!output.success) throw new Error(`The setup child failed: ${stderrOf(output)}`);
  Deno.mkdirSync(`${run.dir}/baseline`, { recursive: true });
  writeImage(readFolder(`${run.dir}/db`), `${run.dir}/baseline`);
}

function resetDb(run: Run): void {
  writeImage(readFolder(`${run.dir}/baseline`), `${run.dir}/db`);
  try {
    Deno.removeSync(`${run.dir}/acks.jsonl`);
  } catch { /* absent */ }
}

async function record(
  run: Run,
  library: string,
  appends: number,
  options: { data: boolean; log: string; crashAt?: number; crashKind?: CrashKind },
): Promise<Deno.CommandOutput> {
  resetDb(run);
  try {
    Deno.removeSync(options.log);
  } catch { /* absent */ }
  const env = recorderEnv({
    library,
    watched: `${run.dir}/db`,
    log: options.log,
    data: options.data,
    mark: `${run.dir}/acks.jsonl`,
    ignore: [denoCacheDir(), run.dir, Deno.env.get("TMPDIR") ?? "/tmp/deno-unused"],
    ...(options.crashAt !== undefined
      ? { crashAt: options.crashAt, crashKind: options.crashKind ?? "any" }
      : {}),
  });
  return await child(run, ["append", String(appends), `${run.dir}/acks.jsonl`], env);
}

function rate(count: number, ms: number): string {
  return `${count} states in ${(ms / 1000).toFixed(2)} s (${
    Math.round(count / (ms / 1000))
  } states/s)`;
}

/** The verdict `--json` writes: what `runner/` reads instead of this tool's console. */
interface SyscallsVerdict {
  status: "PASS" | "FAIL" | "SKIP" | "ERROR";
  reason?: string;
  states: number;
  failures: string[];
  replay?: string;
  runFolder?: string;
}

async function main(): Promise<number> {
  const flags = parseFlags(SYSCALLS_CLI, Deno.args);
  const json = flags.string("--json");
  const verdict = (v: SyscallsVerdict) => {
    if (json) Deno.writeTextFileSync(json, JSON.stringify(v) + "\n");
  };
  const mode = flags.string("--mode") ?? "power-loss";
  if (mode !== "crash" && mode !== "power-loss") {
    fail(`Invalid --mode "${mode}": use crash or power-loss`);
  }
  const profile = (flags.string("--profile") ?? "posix") as Profile;
  if (!PROFILES.includes(profile)) {
    fail(`Invalid --profile "${profile}": use ${PROFILES.join(" or ")}`);
  }
  const crashKind = (flags.string("--crash-kind") ?? "any") as CrashKind;
  if (!CRASH_KINDS.includes(crashKind)) {
    fail(`Invalid --crash-kind "${crashKind}": use ${CRASH_KINDS.join(", ")}`);
  }
  const journal = flags.string("--journal-mode");
  if (journal !== undefined && journal !== "wal" && journal !== "delete") {
    fail(`Invalid --journal-mode "${journal}": use wal or delete`);
  }
  const killsRaw = flags.string("--kills") ?? "8";
  const kills = killsRaw === "all" ? Infinity : flags.int("--kills", 0) ?? 8;
  const appends = flags.int("--appends", 1, 100_000) ?? 20;
  const samples = flags.int("--samples", 0) ?? 12;
  const seed = flags.int("--seed", 0) ?? 1;
  const onlyState = flags.int("--state", 0);
  const target = targetSpecifier(
    flags.string("--target") ?? new URL("../cells/reference_target.ts", import.meta.url).href,
  );

  const built = await buildRecorder();
  if (!built.ok) {
    console.log(`SKIP: ${built.reason}`);
    verdict({ status: "SKIP", reason: built.reason, states: 0, failures: [] });
    return 0;
  }
  const from = flags.string("--from");
  const dir = from ?? Deno.makeTempDirSync({ prefix: "syscalls-" });
  const run: Run = { dir, target, ...(journal ? { journalMode: journal } : {}) };
  const log = `${dir}/fs.log`;
  const policy = [
    journal ? `journal ${journal}` : "",
    ...["NODE_SQLITE_JOURNAL_MODE", "NODE_SQLITE_SYNCHRONOUS", "REFERENCE_SYNCHRONOUS"]
      .filter((name) => Deno.env.get(name)).map((name) => `${name}=${Deno.env.get(name)}`),
  ].filter(Boolean).join(", ");
  console.log(
    `syscalls: ${mode}${mode === "power-loss" ? ` (${profile})` : ""} on ${target}${
      policy ? ` [${policy}]` : ""
    }`,
  );

  if (!from) {
    await setup(run);
    const started = performance.now();
    const output = await record(run, built.path, appends, { data: true, log });
    if (!output.success) throw new Error(`The recorded child failed: ${stderrOf(output)}`);
    console.log(
      `recorded ${appends} appends in ${Math.round(performance.now() - started)} ms: ${
        new TextDecoder().decode(output.stdout).trim()
      }`,
    );
  } else if (!exists(log)) {
    fail(`Invalid --from "${from}": it has no fs.log (pass a run folder a failed run kept)`);
  }
  const parsed = readLog(log);
  const problems = logProblems(parsed);
  if (problems.length) {
    console.error(`The run cannot be judged:\n  ${problems.join("\n  ")}\nrun folder: ${dir}`);
    verdict({
      status: "ERROR",
      reason: `The run cannot be judged: ${problems.join("; ")}`,
      states: 0,
      failures: problems,
      runFolder: dir,
    });
    return 1;
  }
  const counted = parsed.records.filter((r) => r.counted).length;
  console.log(
    `log: ${parsed.records.length} records, ${counted} crash points, ${
      parsed.records.filter((r) => r.kind === "sync").length
    } syncs`,
  );

  const module = await loadTarget(target);
  const options: StoreOptions = journal ? { journalMode: journal } : {};
  const scratch = `${dir}/scratch`;
  const oracle = new AppendOracle(module, options, scratch, DB_NAME, SESSION);
  const baseline = readFolder(`${dir}/baseline`);
  const states: Iterable<CrashState> = mode === "crash"
    ? killStates(parsed, baseline)
    : powerLossStates(parsed, { profile, baseline, samples, seed });
  const failures: { index: number; state: CrashState; why: string }[] = [];
  let index = 0;
  const started = performance.now();
  for (const state of states) {
    const i = index++;
    if (onlyState !== undefined && i !== onlyState) continue;
    const why = oracle.judge(await oracle.recover(state.files, state.key), state.acks);
    if (onlyState !== undefined) writeImage(state.files, `${dir}/state-${i}`);
    if (why) failures.push({ index: i, state, why });
  }
  const elapsed = performance.now() - started;
  const checked = onlyState === undefined ? index : 1;
  console.log(`${rate(checked, elapsed)}; ${oracle.opened} distinct file sets opened`);

  const killFailed: string[] = [];
  if (mode === "crash" && kills > 0 && !from) {
    const ks = kills >= counted
      ? Array.from({ length: counted }, (_, i) => i + 1)
      : Array.from({ length: kills }, (_, i) =>
        1 + Math.floor((i * (counted - 1)) / Math.max(1, kills - 1)));
    const killStarted = performance.now();
    for (const k of ks) {
      const killLog = `${dir}/kill.log`;
      const output = await record(run, built.path, appends, {
        data: false,
        log: killLog,
        crashAt: k,
        crashKind,
      });
      const recorded = readLog(killLog).records.filter((r) => r.counted).length;
      const why = output.signal !== "SIGKILL"
        ? `expected SIGKILL before call ${k}, the child ended with ${
          output.signal ?? `exit ${output.code}`
        }: ${stderrOf(output)}`
        : crashKind === "any" && recorded !== k - 1
        ? `killed before call ${k} but ${recorded} calls were recorded (expected ${k - 1})`
        : oracle.judge(
          await oracle.recover(readFolder(`${dir}/db`), `kill-child ${k}`),
          readAcks(`${dir}/acks.jsonl`),
        );
      if (why) {
        killFailed.push(`kill k=${k}: ${why}`);
        console.error(`FAIL kill k=${k}: ${why}`);
      }
    }
    const killMs = performance.now() - killStarted;
    console.log(`real SIGKILL children: ${rate(ks.length, killMs)}`);
  }

  for (const failure of failures.slice(0, 5)) {
    console.error(`FAIL state ${failure.index} (${failure.state.label}): ${failure.why}`);
  }
  if (failures.length > 5) console.error(`… and ${failures.length - 5} more failed states`);
  const failed = [
    ...failures.map((f) => `state ${f.index} (${f.state.label}): ${f.why}`),
    ...killFailed,
  ];
  if (failed.length) {
    const first = failures[0];
    let replay: string | undefined;
    if (first) {
      const envs = ["NODE_SQLITE_JOURNAL_MODE", "NODE_SQLITE_SYNCHRONOUS", "REFERENCE_SYNCHRONOUS"]
        .filter((name) => Deno.env.get(name)).map((name) => `${name}=${Deno.env.get(name)} `).join(
          "",
        );
      replay =
        `${envs}deno task syscalls --target ${target} --mode ${mode} --profile ${profile} --samples ${samples} --seed ${seed}${
          journal ? ` --journal-mode ${journal}` : ""
        } --from ${dir} --state ${first.index}`;
      console.error(`replay: ${replay}`);
    }
    console.error(`run folder kept: ${dir}`);
    verdict({
      status: "FAIL",
      reason: `${failed.length} crash state(s) lost acknowledged appends: ${failed[0]}`,
      states: checked,
      failures: failed,
      ...(replay ? { replay } : {}),
      runFolder: dir,
    });
    return 1;
  }
  console.log(`PASS: every acknowledged append survived ${checked} states`);
  verdict({ status: "PASS", states: checked, failures: [] });
  if (!flags.has("--keep") && !from) Deno.removeSync(dir, { recursive: true });
  return 0;
}

function readAcks(path: string): string[] {
  if (!exists(path)) return [];
  const text = Deno.readTextFileSync(path);
  return text.split("\n").slice(0, -1);
}

if (import.meta.main) Deno.exit(await main());
