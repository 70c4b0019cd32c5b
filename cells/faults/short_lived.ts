// F5, short-lived processes: many open-append-close processes beside long-lived writers
// on one file lose nothing acknowledged.
import { DatabaseSync } from "node:sqlite";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { besideStore } from "../../harness/evidence.ts";
import { type Child, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { observeJournalMode } from "../../harness/legs.ts";
import { isSqlite } from "./_damage.ts";
import { exists, isFolder } from "../../internal/fs.ts";
import { childEnd, clauseSpawn, finished, legSkip } from "./_lives.ts";
import type { FaultClause, FaultClauseOptions, FaultVerdict } from "./types.ts";
import type { StoredMessage } from "../contract/target.ts";
import { BUSY_REFUSAL } from "../contract/typed.ts";

const WRITER = new URL("./children/short_lived_writer.ts", import.meta.url);
const SHARED = "f5";
/** Short-lived processes: never fewer than 50, quick or not. */
const SHORT_QUICK = 50;
const SHORT_FULL = 120;
/** Short processes alive at once (two cores, and the long writers beside them). */
const AT_ONCE = 4;
const CHILD_DEADLINE_MS = 45_000;

/** A line of a writer's journal. */
/** A line of a writer's journal. */
export interface Line {
  k: "open" | "inv" | "ack" | "refused" | "done" | "error" | "verify";
  seq?: number;
  session?: string;
  content?: string;
  id?: number;
  name?: string;
  message?: string;
  sessions?: Record<string, StoredMessage[]>;
  problems?: string[] | null;
}

/** One writer process and its journal. */
interface Writer {
  label: string;
  journal: string;
  child: Child;
  timedOut?: boolean;
}

/**
 * F5, short-lived processes. At least 50 processes (120 unless quick), four at a time,
 * each open the store, append one to three messages to a shared session and one to a
 * session of its own, and close, while two long-lived processes append to the shared
 * session in a loop until the short ones are done. Must hold: every acknowledged append
 * is read back exactly once by a fresh process, in its session, with the id it was
 * acknowledged with; ids are unique and increase in each process's acknowledgement order;
 * a refused append (only `BusyDeadlineError` may refuse) is not stored; every process
 * ends cleanly; the store's invariants hold and, for an SQLite file, `integrity_check` on
 * a copy is `ok`.
 *
 * @example
 * ```ts ignore
 * import { shortLivedClause } from "./short_lived.ts";
 * import { currentLeg } from "../../harness/legs.ts";
 * const verdict = await shortLivedClause.run({
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   leg: currentLeg(),
 *   seed: 1,
 *   quick: true,
 *   dir: Deno.makeTempDirSync(),
 *   recorder: { skip: "not needed" },
 * });
 * console.log(verdict.status); // "PASS"
 * ```
 */
export const shortLivedClause: FaultClause = {
  id: "F5",
  name: "F5 short-lived processes",
  run: runShortLived,
};

async function runShortLived(options: FaultClauseOptions): Promise<FaultVerdict> {
  const started = performance.now();
  const spawn = clauseSpawn(options);
  // The store's folder holds its files alone; the journals are beside it.
  Deno.mkdirSync(`${options.dir}/db`, { recursive: true });
  const db = `${options.dir}/db/store.db`;
  const stop = `${options.dir}/stop`;
  const count = options.quick ? SHORT_QUICK : SHORT_FULL;
  const writers: Writer[] = [];
  const start = (label: string, mode: string, arg: string): Writer => {
    const journal = `${options.dir}/${label}.jsonl`;
    const writer = { label, journal, child: spawn(WRITER, [mode, db, journal, SHARED, arg]) };
    writers.push(writer);
    return writer;
  };
  try {
    // The first short process makes the file, in the leg's mode, before any race.
    const first = start("short-0", "short", `1:own-0`);
    await settle(first);
    // A store that cannot open (or append) alone fails, whatever the leg's mode.
    const alone = failedAlone(first);
    if (alone) return { status: "FAIL", reason: alone, checks: [alone], judged: 1 };
    const seen = [observeJournalMode(db, "after the first short process", true)];
    // A store whose file is not in the leg's mode (or not SQLite) is not judged on it.
    const early = legSkip(options.leg, seen);
    if (early) return early;
    const longs = [start("long-0", "long", stop), start("long-1", "long", stop)];
    const stalled = await longsStarted(longs);
    if (stalled) return stalled;
    const plan = shortPlan(options.seed, count);
    for (let k = 1; k < count; k += AT_ONCE) {
      const batch = plan.slice(k, k + AT_ONCE).map((n, j) =>
        start(`short-${k + j}`, "short", `${n}:own-${k + j}`)
      );
      seen.push(observeJournalMode(db, `short processes ${k} to ${k + batch.length - 1}`));
      await Promise.all(batch.map(settle));
    }
    Deno.writeTextFileSync(stop, "stop\n");
    await Promise.all(longs.map(settle));
    const verify = start(
      "verify",
      "verify",
      Array.from({ length: count }, (_, k) => `own-${k}`).join(","),
    );
    await settle(verify);
    const skip = legSkip(options.leg, seen);
    if (skip) return skip;
    const checks = judge(writers, db);
    const figures = tally(writers, Math.round(performance.now() - started));
    return checks.length
      ? { status: "FAIL", reason: checks[0]!, checks, judged: writers.length - 1, figures }
      : { status: "PASS", judged: writers.length - 1, figures };
  } finally {
    await reapAll(writers.map((w) => w.child));
  }
}

/** Waits for each long writer's first acknowledged append; a verdict when one never came. */
async function longsStarted(longs: Writer[]): Promise<FaultVerdict | undefined> {
  try {
    await waitFor(() => longs.every((w) => acked(w.journal)), {
      what: "both long-lived writers' first acknowledged append",
      deadlineMs: CHILD_DEADLINE_MS,
      children: longs.map((w) => w.child),
    });
    return undefined;
  } catch (error) {
    const dead = longs.find((w) => w.child.exited);
    // A writer that died alone on its file is the store's failure, and so is one whose
    // every append the store refused all along; a wait that ran out while both still run
    // and nothing was refused is the suite's.
    if (!dead) {
      const journals = longs.map((w) => ({
        label: w.label,
        lines: readAckJournal<Line>(w.journal),
      }));
      const starved = starvedWriter(journals) ?? shutOut(journals);
      if (starved) return { status: "FAIL", reason: starved, checks: [starved], judged: 0 };
      return {
        status: "ERROR",
        reason: error instanceof Error ? error.message : String(error),
        judged: 0,
      };
    }
    const reason = `${dead.label} died before its first acknowledged append: it ${
      childEnd(dead.child, false)
    }`;
    return { status: "FAIL", reason, checks: [reason], judged: 0 };
  }
}

/**
 * Why a long-lived writer that never had an append acknowledged starved: the store
 * refused every one it made (typed busy) until the wait ran out; `undefined` when each
 * had one acknowledged, or one that had none was never refused (the wait is the suite's).
 *
 * @param longs Each long-lived writer's label and journal lines.
 * @returns The reason, or `undefined`.
 */
export function starvedWriter(
  longs: readonly { label: string; lines: readonly Line[] }[],
): string | undefined {
  const starved = longs.find(({ lines }) =>
    !lines.some((l) => l.k === "ack") && lines.some((l) => l.k === "refused")
  );
  if (!starved) return undefined;
  const refusals = starved.lines.filter((l) => l.k === "refused").length;
  return `${starved.label} had no append acknowledged in ${CHILD_DEADLINE_MS} ms beside the other long-lived writer: the store refused all ${refusals} it made (typed busy), so a second process never writes`;
}

/**
 * Why a long-lived writer never opened the store: it was still opening after the whole
 * wait while the other appended beside it (a store that admits one process at a time);
 * `undefined` otherwise (neither got going: the wait is the suite's).
 *
 * @param longs Each long-lived writer's label and journal lines.
 * @returns The reason, or `undefined`.
 */
export function shutOut(
  longs: readonly { label: string; lines: readonly Line[] }[],
): string | undefined {
  const shut = longs.find(({ lines }) => !lines.some((l) => l.k === "open"));
  const other = longs.find(({ lines }) => lines.some((l) => l.k === "ack"));
  if (!shut || !other) return undefined;
  return `${shut.label} never returned from opening the store in ${CHILD_DEADLINE_MS} ms while ${other.label} appended beside it: the store lets one process in at a time, so a second process never writes`;
}

/** How a writer failed: the error it journaled, or how it ended unfinished; else `undefined`. */
function failureOf(
  writer: Writer,
  lines: readonly Line[],
): { error: Line } | { ended: string } | undefined {
  const error = lines.find((l) => l.k === "error");
  if (error) return { error };
  if (lines.some((l) => l.k === "done") && writer.child.exited?.success) return undefined;
  return { ended: childEnd(writer.child, !!writer.timedOut) };
}

/** Why the first short process, alone on a new file, failed; `undefined` when it did not. */
function failedAlone(writer: Writer): string | undefined {
  const failure = failureOf(writer, readAckJournal<Line>(writer.journal));
  if (!failure) return undefined;
  const what = `${writer.label}, alone on a new file,`;
  return "error" in failure
    ? `${what} threw ${failure.error.name}: ${failure.error.message}`
    : `${what} did not finish: it ${failure.ended}`;
}

async function settle(writer: Writer): Promise<void> {
  writer.timedOut = (await finished(writer.child, CHILD_DEADLINE_MS)).timedOut;
}

function acked(journal: string): boolean {
  return readAckJournal<Line>(journal).some((line) => line.k === "ack");
}

/** How many messages each short process appends to the shared session: 1 to 3, seeded. */
function shortPlan(seed: number, count: number): number[] {
  let state = (seed >>> 0) || 1;
  return Array.from({ length: count }, () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return 1 + ((state >>> 16) % 3);
  });
}

/** The failed checks of the run, one line each. */
function judge(writers: Writer[], db: string): string[] {
  const checks: string[] = [];
  const verifier = writers.find((w) => w.label === "verify")!;
  const verify = readAckJournal<Line>(verifier.journal).find((l) => l.k === "verify");
  for (const writer of writers) {
    const lines = readAckJournal<Line>(writer.journal);
    const failure = failureOf(writer, lines);
    // The writer journals every error but an append's BusyDeadlineError (an open or a
    // session's creation refused so is made again, for up to a minute): any other error
    // refused beside other writers where only that one may.
    if (failure && "error" in failure) {
      const { error } = failure;
      const where = error.name === BUSY_REFUSAL
        ? ""
        : " beside other writing processes, where only an error named BusyDeadlineError may refuse";
      checks.push(`${writer.label} threw ${error.name}${where}: ${error.message}`);
    } else if (failure) {
      checks.push(`${writer.label} did not finish: it ${failure.ended}`);
    }
    const ids = lines.filter((l) => l.k === "ack").map((l) => l.id!);
    const back = ids.findIndex((id, i) => i > 0 && !(id > ids[i - 1]!));
    if (back > 0) {
      checks.push(
        `${writer.label}'s acknowledged ids do not increase: ${ids[back - 1]} then ${ids[back]}`,
      );
    }
  }
  if (!verify) {
    return [...checks, `the verifying life read nothing: it ${childEnd(verifier.child, false)}`];
  }
  checks.push(...judgeStored(writers, verify));
  if (verify.problems?.length) checks.push(`checkInvariants: ${verify.problems.join("; ")}`);
  const integrity = integrityOf(db);
  if (integrity) checks.push(integrity);
  return checks;
}

/** Every acknowledged append stored once with its id; no refused one stored; ids unique. */
function judgeStored(writers: Writer[], verify: Line): string[] {
  const checks: string[] = [];
  const stored = new Map<string, { session: string; id: number }[]>();
  const ids = new Map<number, string>();
  for (const [session, messages] of Object.entries(verify.sessions ?? {})) {
    for (const m of messages) {
      const at = stored.get(m.content ?? "") ?? [];
      at.push({ session, id: m.id });
      stored.set(m.content ?? "", at);
      if (ids.has(m.id)) {
        checks.push(`id ${m.id} is stored twice: ${ids.get(m.id)} and ${m.content}`);
      }
      ids.set(m.id, m.content ?? "");
    }
  }
  for (const writer of writers) {
    for (const line of readAckJournal<Line>(writer.journal)) {
      const found = stored.get(line.content ?? "") ?? [];
      if (
        line.k === "ack" &&
        (found.length !== 1 || found[0]!.session !== line.session || found[0]!.id !== line.id)
      ) {
        checks.push(
          `${writer.label}'s acknowledged append "${line.content}" (id ${line.id}, session ${line.session}) is stored ${
            found.length === 0
              ? "nowhere"
              : found.map((f) => `as id ${f.id} in ${f.session}`).join(" and ")
          }`,
        );
      }
      if (line.k === "refused" && found.length) {
        checks.push(
          `${writer.label}'s refused append "${line.content}" is stored (id ${found[0]!.id})`,
        );
      }
    }
  }
  return checks;
}

/** `PRAGMA integrity_check` on a copy of an SQLite file (and its WAL); else `undefined`. */
function integrityOf(db: string): string | undefined {
  if (!exists(db) || isFolder(db)) return undefined;
  const bytes = Deno.readFileSync(db);
  if (!isSqlite(bytes)) return undefined;
  const copy = besideStore(db, "integrity.db");
  Deno.writeFileSync(copy, bytes);
  try {
    Deno.copyFileSync(`${db}-wal`, `${copy}-wal`);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const check = new DatabaseSync(copy);
  try {
    const rows = check.prepare("PRAGMA integrity_check").all() as { integrity_check: string }[];
    const result = rows.map((row) => row.integrity_check).join("; ");
    return result === "ok" ? undefined : `integrity_check on a copy: ${result}`;
  } finally {
    check.close();
  }
}

/** The run's figures: processes, acknowledged and refused appends, time. */
function tally(writers: Writer[], ms: number): Record<string, unknown> {
  const count = (label: string, k: string) =>
    writers.filter((w) => w.label.startsWith(label)).reduce(
      (sum, w) => sum + readAckJournal<Line>(w.journal).filter((l) => l.k === k).length,
      0,
    );
  return {
    shortProcesses: writers.filter((w) => w.label.startsWith("short")).length,
    shortAcks: count("short", "ack"),
    longAcks: count("long", "ack"),
    refused: count("short", "refused") + count("long", "refused"),
    ms,
  };
}
