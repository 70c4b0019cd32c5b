// F3 and F4's run: two store processes under the recorder, each with a log of its own,
// then a fresh reader. Process A opens the store once and appends in a loop; process B
// opens, appends, closes, reopens, several times meanwhile; then both close and a fresh
// process judges every acknowledged append present. A is held (SIGSTOP) just before one
// of its writes, inside a write transaction, until B is refused a lock: so B's first open
// always meets A's `-journal` or `-wal` open, whatever the scheduler does. The process the
// recorder stops is whichever makes the calls (a worker the store started, often), so A's
// whole process tree is continued. The hazards of both logs name the calls; a lost
// acknowledgement or a failed process is the consequence another process shows; a
// writer refused with BusyDeadlineError under contention is the contract's typed refusal.
import { join } from "node:path";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { denoCacheDir, recorderEnv } from "../../recorder/record.ts";
import { hazards, readLog } from "../../recorder/log.ts";
import { exists, isFolder, readPrefix } from "../../internal/fs.ts";
import { lockWaits } from "../../harness/_proc.ts";
import {
  endWithin,
  type RecordedChild,
  recordedEnv,
  spawnRecorded,
} from "../../harness/recorded_child.ts";
import type { FaultClauseOptions, FaultVerdict } from "./types.ts";
import { legSkip } from "./_lives.ts";
import { BUSY_REFUSAL } from "../contract/typed.ts";
import { observeJournalMode } from "../../harness/legs.ts";
import { readReport } from "../../internal/report_line.ts";
import { stderrLine } from "../../internal/stderr_line.ts";

const CHILD = new URL("./children/hazard_store.ts", import.meta.url);
const READY_MS = 30_000;
const LONG_MS = 30_000;
/**
 * How long A is held for B to be refused its lock. A lock wait the recorder cannot see
 * (a blocking `flock`, as the JSON-lines store takes) is never a refusal: A is released
 * once B's tree sat in one waiting lock call for `LOCK_WAIT_MS` (B can do nothing more
 * until A lets go), or after this where threads cannot be read; B's deadline counts
 * from then, so a correct store never waits it out.
 */
const HOLD_MS = 10_000;
const LOCK_WAIT_MS = 300;
/** A's counted call it is held before: past its schema and first appends, in a transaction. */
const HOLD_AT = 40;

/** What a hazard run judges: the hazard codes of its clause, and the rounds of B. */
export interface HazardRunSpec {
  /** The hazard codes the clause fails on (`HazardCode`). */
  codes: readonly number[];
  /** What the clause calls the hazards in its reason. */
  what: string;
}

interface ChildEnd {
  code: number;
  /** How it ended, when not well: "failed with exit code 1", "was killed at …". */
  how: string;
  stdout: string;
  stderr: string;
  /** The error a store call threw, as the child reported it. */
  threw?: { name: string; message: string };
}

interface Recorded {
  dir: string;
  log: string;
  stopFile?: string;
  refusedFile?: string;
}

function childEnv(options: FaultClauseOptions, recorded?: Recorded): Record<string, string> {
  if (!recorded || !("path" in options.recorder)) return recordedEnv(options.leg, {});
  return recordedEnv(
    options.leg,
    recorderEnv({
      library: options.recorder.path,
      watched: join(recorded.dir, "db"),
      log: recorded.log,
      ignore: [recorded.dir, denoCacheDir(), Deno.env.get("TMPDIR") ?? "/tmp/deno-unused"],
      pulledFiles: true,
      ...(recorded.stopFile
        ? { stopAt: HOLD_AT, stopKind: "write" as const, stopFile: recorded.stopFile }
        : {}),
      ...(recorded.refusedFile ? { refusedFile: recorded.refusedFile } : {}),
    }),
  );
}

function spawn(
  options: FaultClauseOptions,
  args: string[],
  env: Record<string, string>,
): RecordedChild {
  return spawnRecorded(CHILD, [options.target, ...args], { env, stdout: "piped" });
}

/** Continues every process of the tree (the one the recorder stopped is among them). */
function resume(spawned: RecordedChild): void {
  if (spawned.tree) return spawned.tree.resume();
  try {
    spawned.process.kill("SIGCONT");
  } catch { /* already gone */ }
}

/** How a hazard child ended; its stderr in one line when it wrote no `{"threw": …}` line. */
async function ended(spawned: RecordedChild, deadlineMs: number): Promise<ChildEnd> {
  const { output, late } = await endWithin(spawned, deadlineMs);
  const decoder = new TextDecoder();
  const text = decoder.decode(output.stderr);
  const threw = threwOf(text);
  const stderr = threw ? `${threw.name}: ${threw.message}` : stderrLine(text).slice(0, 600);
  const code = output.signal ? 128 : output.code;
  const how = late
    ? `was killed at its ${deadlineMs / 1000} s deadline`
    : output.signal
    ? `was killed by ${output.signal}`
    : `failed with exit code ${code}`;
  return { code, how, stdout: decoder.decode(output.stdout), stderr, ...(threw ? { threw } : {}) };
}

/** The child's `{"threw": …}` line, if it wrote one. */
function threwOf(stderr: string): ChildEnd["threw"] {
  for (const line of stderr.split("\n").reverse()) {
    if (!line.startsWith('{"threw"')) continue;
    try {
      const { threw } = JSON.parse(line);
      return { name: String(threw.name), message: String(threw.message) };
    } catch { /* not the child's line */ }
  }
  return undefined;
}

/**
 * The check for a writer that ended badly, or `undefined`: a `BusyDeadlineError` is the
 * typed refusal the contract allows under contention (nothing acknowledged, so nothing
 * to lose), any other error a store call threw is a failure that says so.
 */
function writerCheck(name: string, other: string, end: ChildEnd): string | undefined {
  if (end.code === 0 || end.threw?.name === BUSY_REFUSAL) return undefined;
  if (!end.threw) return `process ${name} ${end.how}: ${end.stderr}`;
  return `process ${name} threw ${end.threw.name} while process ${other} wrote the same store, where only an error named ${BUSY_REFUSAL} may refuse a write: ${end.threw.message}`;
}

/**
 * Waits until B was refused its lock (the recorder made `refusedFile`), or one process of
 * its tree sat in one waiting lock call for `LOCK_WAIT_MS`, or `HOLD_MS` passed.
 */
async function awaitRefusal(
  short: RecordedChild,
  refusedFile: string,
  alive: () => boolean,
): Promise<void> {
  const end = performance.now() + HOLD_MS;
  const waiting = lockWaits(LOCK_WAIT_MS);
  while (performance.now() < end && alive()) {
    if (exists(refusedFile)) return;
    if (waiting(() => [short.tree?.members() ?? [short.process.pid]])) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function awaitFile(path: string, deadlineMs: number, alive: () => boolean) {
  const end = performance.now() + deadlineMs;
  while (performance.now() < end && alive()) {
    try {
      Deno.statSync(path);
      return true;
    } catch { /* not yet */ }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return false;
}

/** The file's journal mode from its header (bytes 18 and 19: 2 is WAL), or `unknown`. */
function journalModeOf(db: string): string {
  if (isFolder(db)) return "unknown";
  const header = readPrefix(db, 20);
  if (!header || header.length < 20) return "unknown";
  return header[18] === 2 && header[19] === 2 ? "wal" : "delete";
}

/** The acknowledged appends the fresh reader does not find, one line each. */
function lostAcks(dir: string, read: Record<string, string[]>): string[] {
  const lines: string[] = [];
  for (const process of ["long", "short"]) {
    let acks: { session: string; id: number; content: string }[] = [];
    try {
      acks = readAckJournal(join(dir, `${process}.acks`));
    } catch { /* none written */ }
    for (const ack of acks) {
      if (!read[ack.session]?.includes(ack.content)) {
        lines.push(
          `acknowledged append ${ack.id} of session "${ack.session}" is missing on reopen`,
        );
      }
    }
  }
  return lines;
}

/** What A and B did: the checks they failed and the typed refusals they met. */
interface WritersRun {
  checks: string[];
  refusals: string[];
  /** Why nothing could be judged: A ran without reaching the write it is held at. */
  unjudged?: string;
}

/**
 * Runs A (long-lived, held at its HOLD_AT-th write) beside B's open-append-close rounds,
 * both under the recorder; A goes on once B was refused or its wait ended.
 */
async function runWriters(
  options: FaultClauseOptions,
  at: { dir: string; rounds: number },
): Promise<WritersRun> {
  const { dir, rounds } = at;
  const db = join(dir, "db", "store.db");
  const file = (name: string) => join(dir, name);
  const long = spawn(
    options,
    [db, file("long.acks"), "long", file("long.ready"), file("stop"), "0"],
    childEnv(options, { dir, log: file("long.log"), stopFile: file("long.held") }),
  );
  let longAlive = true;
  const longEnd = ended(long, READY_MS + HOLD_MS + LONG_MS).then((end) => {
    longAlive = false;
    return end;
  });
  const checks: string[] = [];
  const isReady = await awaitFile(file("long.held"), READY_MS, () => longAlive);
  let shortEnd: ChildEnd | undefined;
  if (isReady) {
    const short = spawn(
      options,
      [db, file("short.acks"), "short", file("short.ready"), file("stop"), String(rounds)],
      childEnv(options, { dir, log: file("short.log"), refusedFile: file("short.refused") }),
    );
    let shortAlive = true;
    const shortDone = ended(short, HOLD_MS + LONG_MS).then((end) => {
      shortAlive = false;
      return end;
    });
    // B has opened once A's lock refuses it; A goes on either way once the wait ends.
    await awaitRefusal(short, file("short.refused"), () => shortAlive);
    resume(long);
    shortEnd = await shortDone;
  }
  Deno.writeTextFileSync(file("stop"), "stop\n");
  const longDone = await longEnd;
  const writers = [["A (long-lived)", "B", longDone], ["B (reopening)", "A", shortEnd]] as const;
  const refusals: string[] = [];
  for (const [name, other, end] of writers) {
    if (!end) continue;
    const check = writerCheck(name, other, end);
    if (check) checks.push(check);
    else if (end.threw) refusals.push(`process ${name}: ${end.stderr}`);
  }
  if (!isReady && checks.length === 0) {
    // A did not fail, yet was never held: the recorder did not see its writes.
    const writes = recordedWrites(file("long.log"));
    return {
      checks,
      refusals,
      unjudged:
        `process A ran without reaching its ${HOLD_AT}th recorded write (${writes} recorded): the recorder does not see the store's writes (a store that writes around libc's wrappers, such as a Go program, a static binary or io_uring, cannot be held), so no collision was made`,
    };
  }
  if (!isReady) {
    checks.push(`process A never reached its ${HOLD_AT}th write: ${longDone.stderr}`);
  }
  return { checks, refusals };
}

/** The writes a log recorded (0 when it cannot be read). */
function recordedWrites(log: string): number {
  try {
    return readLog(log).records.filter((r) => r.kind === "write" && !r.failed).length;
  } catch {
    return 0;
  }
}

/** A fresh reader's view of what A and B acknowledged, or why it could not read. */
async function readBack(
  options: FaultClauseOptions,
  dir: string,
): Promise<{ read: Record<string, string[]> } | { failed: string }> {
  const file = (name: string) => join(dir, name);
  const reader = await ended(
    spawn(
      options,
      [join(dir, "db", "store.db"), file("read.acks"), "read", file("r"), file("stop"), "0"],
      childEnv(options),
    ),
    LONG_MS,
  );
  if (reader.code !== 0) return { failed: `the fresh reader ${reader.how}: ${reader.stderr}` };
  return { read: readReport<Record<string, string[]>>(reader.stdout) ?? {} };
}

/** The hazards of `codes` in A's and B's logs, and how many calls they recorded. */
function logHazards(dir: string, codes: readonly number[]): { found: string[]; calls: number } {
  const found: string[] = [];
  let calls = 0;
  for (const [name, log] of [["A", "long.log"], ["B", "short.log"]] as const) {
    let parsed;
    try {
      parsed = readLog(join(dir, log));
    } catch {
      continue;
    }
    calls += parsed.records.length;
    for (const line of hazards(parsed, codes)) found.push(`process ${name}: ${line}`);
  }
  return { found, calls };
}

/**
 * Runs A beside B's open-append-close rounds under the recorder and judges the hazards
 * of `spec.codes` in both logs, lost acknowledgements and failed processes.
 */
export async function runHazards(
  options: FaultClauseOptions,
  spec: HazardRunSpec,
): Promise<FaultVerdict> {
  if ("skip" in options.recorder) {
    return {
      status: "SKIP",
      reason:
        `the file-system call recorder is not available: ${options.recorder.skip} (fix: install a C compiler and run deno task recorder on glibc Linux)`,
      judged: 0,
    };
  }
  const dir = join(options.dir, `hazards-${options.leg.name}`);
  Deno.mkdirSync(join(dir, "db"), { recursive: true });
  const db = join(dir, "db", "store.db");
  const file = (name: string) => join(dir, name);
  const rounds = options.quick ? 4 : 8;
  const started = performance.now();
  const { checks, refusals, unjudged } = await runWriters(options, { dir, rounds });
  const back = await readBack(options, dir);
  const read = "read" in back ? back.read : {};
  if ("failed" in back) checks.push(back.failed);
  const { found, calls } = logHazards(dir, spec.codes);
  checks.unshift(...found);
  if ("read" in back) checks.push(...lostAcks(dir, read));
  const figures = {
    journalMode: journalModeOf(db),
    hazards: found.length,
    calls,
    rounds,
    acknowledged: (read.long?.length ?? 0) + (read.short?.length ?? 0),
    ...(refusals.length ? { refusals } : {}),
    ms: Math.round(performance.now() - started),
    logs: [file("long.log"), file("short.log")],
  };
  if (calls === 0) {
    return {
      status: "SKIP",
      reason:
        "the store's processes did not load the recorder (LD_PRELOAD): run them as Linux/glibc processes with cc available (deno task recorder)",
      judged: 0,
      checks,
      figures,
    };
  }
  if (unjudged) return { status: "ERROR", reason: unjudged, judged: 0, figures };
  // A file not in the leg's journal mode judged another leg: SKIP, as every clause does.
  const skip = legSkip(options.leg, [observeJournalMode(db, "after both processes", true)]);
  if (skip) return { ...skip, figures: { ...figures, ...skip.figures } };
  if (checks.length === 0) return { status: "PASS", judged: calls, figures };
  return {
    status: "FAIL",
    reason: found.length ? `${spec.what}: ${found[0]}` : checks[0]!,
    judged: calls,
    checks,
    figures,
  };
}
