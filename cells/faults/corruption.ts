// F2, corruption fails closed: a store whose file was damaged between lives refuses it
// with a typed error, and never serves a shorter transcript as whole.
import { readAckJournal } from "../../harness/ack_journal.ts";
import { reapAll } from "../../harness/child.ts";
import { type Answer, describeAnswer, GENERIC_ERRORS } from "../contract/typed.ts";
import type { StoredMessage } from "../contract/target.ts";
import { damage, type DamageName, damagesFor } from "./_damage.ts";
import { childEnd, clauseSpawn, finished, legSkip } from "./_lives.ts";
import { copyTree, filesUnder } from "../../internal/fs.ts";
import { observeJournalMode } from "../../harness/legs.ts";
import type { FaultClause, FaultClauseOptions, FaultVerdict } from "./types.ts";

const LIFE = new URL("./children/corruption_life.ts", import.meta.url);
const SESSION = "f2";
/** Acknowledged messages of the first life. */
const MESSAGES = 30;
/** How long one life may take. */
const LIFE_DEADLINE_MS = 45_000;

/** A line of a life's journal. */
interface Step extends Answer {
  step: string;
  i?: number;
  id?: number;
  content?: string;
}

/** An acknowledged message of the first life. */
interface Ack {
  id: number;
  content: string;
}

/**
 * F2, corruption fails closed. A first life (a child) creates a session and appends 30
 * acknowledged messages; then, each on a fresh copy of its files, the store's largest file
 * is damaged the way the field found them: for an SQLite file the sector holding the
 * b-tree header of a page of message rows zeroed, the file cut in the middle, or its
 * first 100 bytes replaced by a foreign header; for any other file, the record in its
 * middle zeroed inside. A second life must refuse: its open, or its read of the session,
 * throws a typed error (a name of the store's own, not `Error` nor `SqliteError`), and
 * every append after it throws; it never serves fewer messages than were acknowledged, a
 * gap or a changed text as whole; an append it acknowledges must be read back, with the
 * whole transcript, by a third life.
 *
 * @example
 * ```ts ignore
 * import { corruptionClause } from "./corruption.ts";
 * import { currentLeg } from "../../harness/legs.ts";
 * const verdict = await corruptionClause.run({
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
export const corruptionClause: FaultClause = {
  id: "F2",
  name: "F2 corruption fails closed",
  run: runCorruption,
};

async function runCorruption(options: FaultClauseOptions): Promise<FaultVerdict> {
  const spawn = clauseSpawn(options);
  const first = `${options.dir}/first`;
  Deno.mkdirSync(first, { recursive: true });
  const firstJournal = `${options.dir}/first.jsonl`;
  const writer = spawn(LIFE, [
    "write",
    `${first}/store.db`,
    firstJournal,
    SESSION,
    `${MESSAGES}:${options.seed}`,
  ]);
  try {
    const end = await finished(writer, LIFE_DEADLINE_MS);
    const steps = readAckJournal<Step>(firstJournal);
    const acks: Ack[] = steps.filter((s) => s.step === "ack").map((s) => ({
      id: s.id!,
      content: s.content!,
    }));
    if (!end.status.success || !steps.some((s) => s.step === "done")) {
      return {
        status: "ERROR",
        reason: `The first life could not write its ${MESSAGES} messages: it ${
          childEnd(writer, end.timedOut)
        }`,
        judged: 0,
      };
    }
    const largest = filesUnder(first)[0];
    const audit = largest
      ? [observeJournalMode(`${first}/${largest.name}`, "after the first life", true)]
      : [];
    return legSkip(options.leg, audit) ?? await judgeDamages(options, acks);
  } finally {
    // Only its own child: other clauses run beside this one in the same process.
    await reapAll([writer]);
  }
}

/** Damages a copy of the first life's files each way that applies, and judges each. */
async function judgeDamages(options: FaultClauseOptions, acks: Ack[]): Promise<FaultVerdict> {
  const first = `${options.dir}/first`;
  const largest = filesUnder(first)[0];
  if (!largest || largest.size === 0) {
    return { status: "ERROR", reason: `The first life left no file in ${first}`, judged: 0 };
  }
  const bytes = Deno.readFileSync(`${first}/${largest.name}`);
  const needle = acks[Math.floor(acks.length / 2)]!.content;
  const checks: string[] = [];
  const outcomes: Record<string, string> = {};
  const skipped: string[] = [];
  for (const name of damagesFor(bytes)) {
    const damaged = damage(bytes, name, needle);
    if ("skip" in damaged) {
      skipped.push(`${name}: ${damaged.skip}`);
      continue;
    }
    const dir = `${options.dir}/${name.replace(" ", "_")}`;
    copyTree(first, dir);
    Deno.writeFileSync(`${dir}/${largest.name}`, damaged.bytes);
    const what = `${name} damage (${largest.name}: ${damaged.detail})`;
    const found = await judgeCase(options, { name, dir, acks });
    outcomes[name] = found.outcome;
    checks.push(...found.fails.map((fail) => `${what}: ${fail}`));
  }
  const judged = Object.keys(outcomes).length;
  const figures = { acknowledged: acks.length, file: largest.name, outcomes, skipped };
  if (checks.length) {
    return { status: "FAIL", reason: checks[0]!, checks, judged, figures };
  }
  if (judged === 0) {
    return { status: "SKIP", reason: `No damage applies: ${skipped.join("; ")}`, judged, figures };
  }
  return { status: "PASS", judged, figures };
}

/** The second life on a damaged copy, and the third when the second acknowledged an append. */
async function judgeCase(
  options: FaultClauseOptions,
  run: { name: DamageName; dir: string; acks: Ack[] },
): Promise<{ fails: string[]; outcome: string }> {
  const spawn = clauseSpawn(options);
  const journal = `${run.dir}.second.jsonl`;
  const second = spawn(LIFE, ["judge", `${run.dir}/store.db`, journal, SESSION, "f2"]);
  const end = await finished(second, LIFE_DEADLINE_MS);
  const steps = readAckJournal<Step>(journal);
  const fails: string[] = [];
  const open = steps.find((s) => s.step === "open");
  const read = steps.find((s) => s.step === "read");
  const appends = steps.filter((s) => s.step === "append");
  const outcome = [open, read, ...appends].filter((s) => s !== undefined)
    .map((s) => `${s.step} ${s.threw ? `threw ${s.name}` : "returned"}`).join(", ");
  if (!steps.some((s) => s.step === "done")) {
    fails.push(
      `the second life died before it answered every call (${outcome}): it ${
        childEnd(second, end.timedOut)
      }`,
    );
  }
  if (open?.threw) {
    if (untyped(open)) fails.push(`the open ${describeAnswer(open)}, not a typed error`);
    return { fails, outcome };
  }
  if (read && !read.threw) {
    const wrong = notWhole(read.value as StoredMessage[], run.acks);
    if (wrong) fails.push(`the read served a transcript as whole: ${wrong}`);
  } else if (read && untyped(read)) {
    fails.push(`the read ${describeAnswer(read)}, not a typed error`);
  }
  const kept: Ack[] = [];
  for (const append of appends) {
    if (!append.threw) kept.push({ id: append.value as number, content: append.content! });
    else if (untyped(append)) {
      fails.push(`an append after the damage ${describeAnswer(append)}, not a typed error`);
    }
  }
  if (kept.length) fails.push(...await thirdLife(options, run, kept));
  return { fails, outcome };
}

/** A fresh life reads the session: every acknowledged message, the second life's too. */
async function thirdLife(
  options: FaultClauseOptions,
  run: { dir: string; acks: Ack[] },
  kept: Ack[],
): Promise<string[]> {
  const journal = `${run.dir}.third.jsonl`;
  const third = clauseSpawn(options)(LIFE, ["read", `${run.dir}/store.db`, journal, SESSION]);
  const end = await finished(third, LIFE_DEADLINE_MS);
  const steps = readAckJournal<Step>(journal);
  const read = steps.find((s) => s.step === "read");
  const open = steps.find((s) => s.step === "open");
  const acked = `the second life acknowledged ${kept.length} append(s) (ids ${
    kept.map((k) => k.id).join(", ")
  })`;
  if (!read) {
    const why = open?.threw ? `its open ${describeAnswer(open)}` : childEnd(third, end.timedOut);
    return [`${acked} it cannot keep: a third life cannot read the session: ${why}`];
  }
  if (read.threw) {
    return [`${acked} it cannot keep: a third life's read ${describeAnswer(read)}`];
  }
  const wrong = notWhole(read.value as StoredMessage[], [...run.acks, ...kept]);
  return wrong ? [`${acked}, but a third life read: ${wrong}`] : [];
}

function untyped(answer: Answer): boolean {
  return GENERIC_ERRORS.has(answer.name ?? "");
}

/** What makes `messages` not the acknowledged transcript, or `undefined` when it is. */
function notWhole(messages: StoredMessage[], acks: Ack[]): string | undefined {
  if (!Array.isArray(messages)) return `not a list of messages: ${JSON.stringify(messages)}`;
  const byId = new Map(messages.map((m) => [m.id, m]));
  const missing = acks.filter((a) => !byId.has(a.id)).map((a) => a.id);
  const changed = acks.filter((a) => byId.has(a.id) && byId.get(a.id)!.content !== a.content)
    .map((a) => a.id);
  const known = new Set(acks.map((a) => a.id));
  const foreign = messages.filter((m) => !known.has(m.id)).map((m) => m.id);
  const disorder = messages.findIndex((m, i) => i > 0 && m.id <= messages[i - 1]!.id);
  const problems = [
    missing.length ? `${missing.length} acknowledged missing (ids ${span(missing)})` : "",
    changed.length ? `${changed.length} with changed text (ids ${span(changed)})` : "",
    foreign.length ? `${foreign.length} never acknowledged (ids ${span(foreign)})` : "",
    disorder > 0 ? `ids out of order at position ${disorder}` : "",
  ].filter(Boolean);
  if (!problems.length) return undefined;
  return `${messages.length} of ${acks.length} acknowledged messages: ${problems.join("; ")}`;
}

function span(ids: number[]): string {
  return ids.length > 6 ? `${ids.slice(0, 3).join(", ")} … ${ids.at(-1)}` : ids.join(", ");
}
