// The oracle's checks of the clauses of cells 8 to 13 on one recovered state, beyond the
// interrupted operation's all-or-nothing match: a batch's rows contiguous after every
// earlier id and `messageCount` agreeing (9); the typed refusal of appends to ended
// sessions, and an open one taking them (10); a renewed lease held and renewable by its
// holder only (11); the pending list exactly the pending handoffs (12); a refused write
// typed and changing nothing (13); every session of a rotation chain resolving to its one
// live tip, and no parent with a continuation reopened as an orphan (8). The probes write,
// so they run on a copy of the recovered files.
import { basename, dirname, join } from "node:path";
import { answerOf, describeAnswer, verdict } from "../../../cells/contract/typed.ts";
import { copyTree } from "../../../internal/fs.ts";
import type { ProgramOp } from "./ops.ts";
import { ENDABLE, LEASE_HOLDER, LEASE_MS, type SweepStore } from "./runner.ts";
import type { StoreState } from "./snapshot.ts";

/** The clauses of cells 8 to 13, as the reports name them. */
export const NEW_CLAUSES = {
  resume: "resume resolution",
  batch: "batch atomicity",
  ends: "ends and reopens",
  lease: "lease renewal",
  pending: "pending handoffs",
  checkpoint: "checkpoint validity",
} as const;

/** What the clause checks read: the program, where it stopped, the states around it. */
export interface ClauseInput {
  /** Opens the store on the leg. */
  openStore: (path: string) => Promise<SweepStore>;
  /** The recovered database (left as it is: the probes copy it). */
  db: string;
  /** The operations. */
  program: readonly ProgramOp[];
  /** The operation the crash interrupted. */
  interrupted: number;
  /** How the recovered state matched it. */
  match: "without" | "with" | "unchanged" | undefined;
  /** The recovered state. */
  recovered: StoreState;
  /** The uncrashed run: states before each operation (and after the last), results. */
  ref: { snaps: StoreState[]; results: unknown[] };
  /** Records a problem under its clause. */
  fail: (clause: string, text: string) => void;
}

/**
 * The clauses a state of `program` is judged for beyond its interrupted operation's: a
 * rotation's states for resume resolution, a claim's for the pending list, when the
 * store has the methods.
 *
 * @param program The operations.
 * @param methods The store's methods.
 * @returns The extra clauses.
 * @example
 * ```ts
 * import { alsoJudged } from "./clause_checks.ts";
 * console.log(alsoJudged(["rotate"], ["resolveResumeSessionId"])); // ["resume resolution"]
 * ```
 */
export function alsoJudged(program: readonly ProgramOp[], methods: readonly string[]): string[] {
  const out: string[] = [];
  if (program.includes("rotate") && methods.includes("resolveResumeSessionId")) {
    out.push(NEW_CLAUSES.resume);
  }
  if (
    program.includes("claim") && !program.includes("request") &&
    methods.includes("listPendingHandoffs")
  ) out.push(NEW_CLAUSES.pending);
  return out;
}

/** The operations whose effect holds in the recovered state (acknowledged, or matched with). */
function landed(input: ClauseInput, op: ProgramOp): number[] {
  const upTo = input.match === "with" ? input.interrupted : input.interrupted - 1;
  return input.program.flatMap((o, j) => o === op && j <= upTo ? [j] : []);
}

/** Cell 9: each landed batch holds the next ranks after every row before it. */
function checkBatches(input: ClauseInput): void {
  const rows = Object.values(input.recovered.messages).flat();
  for (const j of landed(input, "batch")) {
    const before = Object.values(input.ref.snaps[j]!.messages).flat().length;
    const rank = (tag: string) =>
      Math.min(...rows.filter((r) => r[2]?.startsWith(`${tag} `)).map((r) => r[0]));
    const got = [rank(`q${j}`), rank(`r${j}`)];
    if (got[0] !== before || got[1] !== before + 1) {
      input.fail(
        NEW_CLAUSES.batch,
        `the batch of operation ${j} holds places ${got.join(", ")} of the store's id order, ` +
          `expected ${before}, ${before + 1} (contiguous, after every earlier id)`,
      );
    }
  }
}

/** Cell 13: a refused write threw a typed error in the uncrashed run and changed nothing. */
function checkRefusals(input: ClauseInput): void {
  const { program, interrupted, ref, fail } = input;
  for (const [j, op] of program.entries()) {
    if (op !== "ghost" || j > interrupted) continue;
    const result = ref.results[j] as { answer?: string; name?: string | null } | undefined;
    // A crash after the last acknowledgement repeats the last operation, with no result.
    if (j === interrupted && result === undefined) continue;
    if (result?.answer !== "refused" || !result.name) {
      fail(
        NEW_CLAUSES.checkpoint,
        `an append to the missing session ghost (operation ${j}) was not refused with a ` +
          `typed error: ${JSON.stringify(result ?? null)}`,
      );
    }
    if (j === interrupted && input.match !== undefined && input.match !== "unchanged") {
      fail(
        NEW_CLAUSES.checkpoint,
        `the refused append to ghost (operation ${j}) changed the store: it matched "${input.match}", not "unchanged"`,
      );
    }
  }
}

/** A copy of the recovered files (the probes write), removed after `fn`. */
async function onCopy<T>(db: string, fn: (copy: string) => Promise<T>): Promise<T> {
  const dir = Deno.makeTempDirSync({ prefix: "sweep-probe-" });
  const copy = join(dir, basename(db));
  // Everything in the database's folder: a journal, a WAL, files the store named its own way.
  copyTree(dirname(db), dir);
  try {
    return await fn(copy);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

/**
 * Runs the clause checks of cells 8 to 13 that apply to the state's program: the reads
 * on the recovered state first, then the probes, on one copy of its files.
 *
 * @param input The state, its match, the recovered and reference states.
 * @example
 * ```ts ignore
 * import { clauseChecks } from "./clause_checks.ts";
 * await clauseChecks({ openStore, db, program: ["ghost"], interrupted: 0, match, recovered, ref, fail });
 * ```
 */
export async function clauseChecks(input: ClauseInput): Promise<void> {
  const { program } = input;
  if (program.includes("batch")) checkBatches(input);
  if (program.includes("ghost")) checkRefusals(input);
  const probed = ["batch", "rotate", "end", "reopen", "ensure", "refresh", "request", "claim"];
  if (!program.some((op) => probed.includes(op))) return;
  await onCopy(input.db, async (copy) => {
    const store = await input.openStore(copy);
    try {
      if (program.includes("batch")) await checkCounts(store, input);
      if (program.includes("rotate")) await checkResolution(store, input);
      if (program.includes("claim") || program.includes("request")) {
        await checkPendingList(store, input);
      }
      if (program.some((op) => op === "end" || op === "reopen" || op === "ensure")) {
        await probeEnds(store, input);
      }
      if (program.includes("refresh")) await probeLease(store, input);
    } finally {
      await store.close();
    }
  });
}

/** Cell 9: `messageCount`, when the store has it, equals the active rows of every session. */
async function checkCounts(store: SweepStore, input: ClauseInput): Promise<void> {
  if (!store.messageCount) return;
  for (const [id, rows] of Object.entries(input.recovered.messages)) {
    const active = rows.filter((r) => r[3]).length;
    const count = await store.messageCount(id);
    if (count !== active) {
      input.fail(NEW_CLAUSES.batch, `messageCount(${id}) = ${count}, ${active} active rows`);
    }
  }
}

/** Cell 8: every session of `main`'s rotation chain resolves to its one live tip. */
async function checkResolution(store: SweepStore, input: ClauseInput): Promise<void> {
  if (!store.resolveResumeSessionId) return;
  const sessions = input.recovered.sessions;
  const next = (id: string) => sessions.find((s) => s.parent === id && s.id.startsWith("rot-"));
  const chain = [sessions.find((s) => s.id === "main")!];
  for (let s = next("main"); s; s = next(s.id)) chain.push(s);
  const tip = chain.at(-1)!;
  if (tip.ended) {
    input.fail(NEW_CLAUSES.resume, `the chain's last session ${tip.id} is ended: no live tip`);
    return;
  }
  for (const s of chain) {
    const resolved = await store.resolveResumeSessionId(s.id);
    if (resolved !== tip.id) {
      input.fail(
        NEW_CLAUSES.resume,
        `resolveResumeSessionId(${s.id}) = ${resolved}, expected the live tip ${tip.id}`,
      );
    }
    if (!store.findLiveCompressionChild) continue;
    const child = next(s.id);
    const expected = child && !child.ended ? child.id : undefined;
    const found = (await store.findLiveCompressionChild(s.id))?.id;
    if (found !== expected) {
      input.fail(
        NEW_CLAUSES.resume,
        `findLiveCompressionChild(${s.id}) = ${found}, expected ${expected}`,
      );
    }
  }
  await probeReopenOrphan(store, input, chain.filter((s) => next(s.id)).map((s) => s.id));
}

/** Cell 8: a parent with a published continuation is never reopened as an orphan (after the reads: it writes). */
async function probeReopenOrphan(
  store: SweepStore,
  input: ClauseInput,
  parents: readonly string[],
): Promise<void> {
  if (!store.reopenOrphanedCompressionSession) return;
  for (const id of parents) {
    const answer = await answerOf(() => store.reopenOrphanedCompressionSession!(id));
    if (verdict(answer) === "accepted") {
      input.fail(
        NEW_CLAUSES.resume,
        `reopenOrphanedCompressionSession(${id}) ${
          describeAnswer(answer)
        } for a parent with a published continuation`,
      );
    }
  }
}

/** Cell 12: the pending list holds each pending handoff once, and nothing else. */
async function checkPendingList(store: SweepStore, input: ClauseInput): Promise<void> {
  if (!store.listPendingHandoffs) return;
  const listed = (await store.listPendingHandoffs()).map((s) => s.id);
  const pending = input.recovered.sessions.filter((s) => s.handoff === "pending").map((s) => s.id);
  const twice = listed.filter((id, n) => listed.indexOf(id) !== n);
  const missing = pending.filter((id) => !listed.includes(id));
  const extra = listed.filter((id) => !pending.includes(id));
  const problems = [
    ...(twice.length ? [`listed twice: ${[...new Set(twice)].join(", ")}`] : []),
    ...(missing.length ? [`pending, not listed: ${missing.join(", ")}`] : []),
    ...(extra.length ? [`listed, not pending: ${[...new Set(extra)].join(", ")}`] : []),
  ];
  if (problems.length) {
    input.fail(NEW_CLAUSES.pending, `listPendingHandoffs: ${problems.join("; ")}`);
  }
}

const ENDED_ERRORS = ["SessionEndedError", "CompressionSessionClosedError"];

/** Cell 10: an ended session refuses an append with the typed error; `ens` open takes one. */
async function probeEnds(store: SweepStore, input: ClauseInput): Promise<void> {
  for (const s of input.recovered.sessions) {
    if (!s.ended && s.id !== ENDABLE) continue;
    const answer = await answerOf(() =>
      store.appendMessage(s.id, { role: "user", content: "probe after recovery" })
    );
    if (s.ended && !(answer.threw && ENDED_ERRORS.includes(answer.name ?? ""))) {
      input.fail(
        NEW_CLAUSES.ends,
        `an append to the ended session ${s.id} ${describeAnswer(answer)}, not ${
          ENDED_ERRORS.join(" or ")
        }`,
      );
    } else if (!s.ended && answer.threw) {
      input.fail(
        NEW_CLAUSES.ends,
        `the open session ${s.id} refused an append: ${describeAnswer(answer)}`,
      );
    }
  }
}

/** Cell 11: another holder can neither take nor renew the lease; its holder renews it once acknowledged. */
async function probeLease(store: SweepStore, input: ClauseInput): Promise<void> {
  const other = `${LEASE_HOLDER}-other`;
  const foreign = await answerOf(() => store.refreshCompressionLock!("main", other, LEASE_MS));
  if (verdict(foreign) !== "refused") {
    input.fail(
      NEW_CLAUSES.lease,
      `a holder that never took main's lock renewed it: refreshCompressionLock ${
        describeAnswer(foreign)
      }`,
    );
  }
  const acked = input.program.slice(0, input.interrupted).includes("refresh");
  if (!acked || !store.tryAcquireCompressionLock) return;
  if (await store.tryAcquireCompressionLock("main", other, LEASE_MS)) {
    input.fail(
      NEW_CLAUSES.lease,
      `another holder took main's lock after an acknowledged renewal by ${LEASE_HOLDER}`,
    );
    return;
  }
  const own = await answerOf(() => store.refreshCompressionLock!("main", LEASE_HOLDER, LEASE_MS));
  if (verdict(own) !== "accepted") {
    input.fail(
      NEW_CLAUSES.lease,
      `the holder of an acknowledged renewal cannot renew it after recovery: ${
        describeAnswer(own)
      }`,
    );
  }
}
