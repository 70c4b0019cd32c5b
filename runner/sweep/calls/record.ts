// The recorded-call sweep's children: the seeded template, a program's run under the
// LD_PRELOAD recorder (uncrashed with data, or SIGKILLed before call k), and a fresh
// process continuing a recovered state (resume). They run with every permission: Deno
// passes LD_PRELOAD to a child only with an unscoped --allow-run, and the recorder must
// see every call of the store, whatever it needs.
import { stderrLine } from "../../../internal/stderr_line.ts";
import { join } from "node:path";
import { type FileSet, readFolder, writeImage } from "../../../recorder/image.ts";
import { denoCacheDir, recorderEnv, type RecorderOptions } from "../../../recorder/record.ts";
import type { LegName } from "../../../harness/legs.ts";
import type { Ack } from "../core/oracle.ts";
import type { ProgramOp } from "../core/program.ts";
import { SWEEP_CHILD } from "../core/state_child.ts";
import { readReport } from "../../../internal/report_line.ts";
import { childOutput } from "../../../internal/child_output.ts";
import { killAtDeadline } from "../../../internal/deadline_kill.ts";
import { spawnTree } from "../../_tree_child.ts";

/** What the children of one sweep share. */
export interface CallChildren {
  /** The target specifier. */
  target: string;
  /** The leg (its journal mode goes to the children). */
  leg: LegName;
  /** The seed of the message texts. */
  seed: number;
  /** The recorder's library. */
  recorder: string;
  /** The seeded store every program starts from. */
  templateFiles: FileSet;
}

/** A child's output, decoded. */
export interface ChildRun {
  /** How it ended. */
  status: Deno.CommandStatus;
  /** Its stdout. */
  stdout: string;
  /** The last lines of its stderr, joined by ` | `. */
  stderr: string;
}

/** A sweep child that has not ended after this long is killed, its hang named. */
export const CHILD_DEADLINE_MS = 60_000;

/** Runs the sweep's child script with every permission on the leg, within the deadline. */
export async function runChild(
  c: Pick<CallChildren, "target" | "leg">,
  args: string[],
  env: Record<string, string>,
): Promise<ChildRun> {
  const base: Record<string, string> = { ...Deno.env.toObject(), NO_COLOR: "1", ...env };
  if (c.leg !== "default") base.SESSION_DB_JOURNAL_MODE = c.leg;
  else delete base.SESSION_DB_JOURNAL_MODE;
  delete base.SESSION_DB_CRASH_AT;
  const { child, kill, running, settle } = spawnTree(Deno.execPath(), {
    args: [
      "run",
      "--no-lock",
      "-A",
      "--unstable-kv",
      SWEEP_CHILD.href,
      args[0]!,
      c.target,
      ...args.slice(1),
    ],
    env: base,
    stdout: "piped",
    stderr: "piped",
  });
  const deadline = killAtDeadline(kill, CHILD_DEADLINE_MS);
  // A crash takes what the store started (a helper of its would hold the pipes open);
  // what a child that ended by itself left running is left to the run scope, which names
  // it a survivor at the end.
  const output = await childOutput(child, {
    onExit: (status) => {
      if (status.signal) kill();
    },
  });
  deadline.clear();
  const late = deadline.passed();
  if (output.signal || !running().length) await settle();
  const decoder = new TextDecoder();
  const stderr = stderrLine(decoder.decode(output.stderr));
  return {
    // A hang is no crash the sweep asked for: never SIGKILL, always a failed run.
    status: late
      ? { success: false, code: output.code, signal: null }
      : { success: output.success, code: output.code, signal: output.signal },
    stdout: decoder.decode(output.stdout),
    stderr: late
      ? `it had not ended after ${
        CHILD_DEADLINE_MS / 1000
      } s and was killed (an operation of the store never returned)${stderr ? `: ${stderr}` : ""}`
      : stderr,
  };
}

/** A recorded run of a program: its folder, log, marks and how the child ended. */
export interface Recording {
  /** The run folder. */
  dir: string;
  /** The recorder's log. */
  log: string;
  /** The marks (intents and acknowledgements, in the log too). */
  marks: string;
  /** How the child ended. */
  run: ChildRun;
}

/**
 * Runs `program` on a fresh copy of the template under the recorder, in `at.dir`
 * (SIGKILL before call `at.crashAt`, when set).
 */
export async function record(
  c: CallChildren,
  program: readonly ProgramOp[],
  at: { dir: string; crashAt?: number },
): Promise<Recording> {
  const { dir, crashAt } = at;
  const start = startRecording(c, dir);
  const env = recorderEnv({
    ...start.options,
    data: crashAt === undefined,
    ...(crashAt !== undefined ? { crashAt } : {}),
  });
  const run = await runChild(c, runArgs(c, program, start), env);
  return { dir, log: start.options.log, marks: start.marks, run };
}

/** What a recorded run starts from: the template copied into `dir/db`, the recorder's options. */
export interface RecordingStart {
  /** The recorder's options (library, watched folder, log, marks, ignored folders). */
  options: RecorderOptions;
  /** The marks file (the child's intents and acknowledgements). */
  marks: string;
  /** The database. */
  db: string;
}

/** Copies the template into `dir/db` and names the run's files; the recorder's options. */
export function startRecording(c: CallChildren, dir: string): RecordingStart {
  Deno.mkdirSync(join(dir, "db"), { recursive: true });
  writeImage(c.templateFiles, join(dir, "db"));
  const marks = join(dir, "marks.jsonl");
  const log = join(dir, "fs.log");
  for (const path of [marks, log]) {
    try {
      Deno.removeSync(path);
    } catch { /* absent */ }
  }
  return {
    options: {
      library: c.recorder,
      watched: join(dir, "db"),
      log,
      mark: marks,
      ignore: [dir, denoCacheDir(), Deno.env.get("TMPDIR") ?? "/tmp/deno-unused"],
    },
    marks,
    db: join(dir, "db", "store.db"),
  };
}

/** The sweep child's arguments that run `program` on a started recording. */
export function runArgs(
  c: CallChildren,
  program: readonly ProgramOp[],
  start: RecordingStart,
): string[] {
  return ["run", start.db, start.marks, start.marks, String(c.seed), program.join("+")];
}

/** The acknowledgements among mark lines (intents have no `result`); a torn last line was never one. */
export function acksOf(lines: readonly string[]): Ack[] {
  const acks: Ack[] = [];
  for (const line of lines) {
    let entry: Ack;
    try {
      entry = JSON.parse(line);
    } catch {
      break;
    }
    if ("result" in entry) acks.push(entry);
  }
  return acks;
}

/** A journal's complete lines (none when it is missing). */
export function readLines(path: string): string[] {
  try {
    return Deno.readTextFileSync(path).split("\n").slice(0, -1);
  } catch {
    return [];
  }
}

/** What the seeding child found: the store's methods, crash points, and its library. */
export interface Seeded {
  /** The seeded folder's files. */
  files: FileSet;
  /** The store's methods. */
  methods: string[];
  /** The target's crash points. */
  crashPoints: string[];
  /** Whether the store loaded the library `DENO_SQLITE_PATH` names (this project's binding). */
  binding?: boolean;
}

/** Seeds the template in a child: the store's methods and crash points, or why it cannot. */
export async function seedTemplate(
  c: Pick<CallChildren, "target" | "leg" | "seed">,
  dir: string,
  env: Record<string, string> = {},
): Promise<Seeded | { failed: string }> {
  Deno.mkdirSync(dir, { recursive: true });
  const setup = await runChild(c, ["setup", join(dir, "store.db"), String(c.seed)], env);
  if (!setup.status.success) {
    return {
      failed: `the store could not be seeded: ${setup.stderr || `exit ${setup.status.code}`}`,
    };
  }
  const said = readReport<Omit<Seeded, "files">>(setup.stdout);
  if (!said) return { failed: `the store could not be seeded: the child printed no report` };
  return { files: readFolder(dir), ...said };
}
