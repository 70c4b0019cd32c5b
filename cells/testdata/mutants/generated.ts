/**
 * Mutants generated from the reference store's source, so that the planted set is not
 * hand-picked. Each is a copy of `session_db/` (and the `internal/` it imports) under
 * `.cache/mutants/generated/<id>/` with ONE change, plus a `target.ts` there that opens it
 * and declares the store's crash points minus those of every method the change touches.
 * Six families:
 *
 * - `split:<point>`: the write transaction committed at a crash point inside it and a
 *   new `BEGIN IMMEDIATE` begun (two transactions where there was one);
 * - `where:<method>:<column>`: one conjunct of a guarded UPDATE/DELETE dropped (made
 *   `(conjunct OR 1)`, which keeps its parameters);
 * - `ack-before-commit:<method>`: the method returns before COMMIT; the next write on the
 *   connection (or its close) commits it;
 * - `liveness:<function>`: a dead process treated as alive (a call to `processAlive`
 *   answered `true`, or `processAlive` itself);
 * - `check-then-act:<method>[:<column>]`: the operation checked in a rolled-back
 *   transaction of its own, then written with the check's guard reads (or one guard
 *   conjunct's truth) instead of its own;
 * - `resume:<method>:messages.id`: message ids from a counter this site advances only after
 *   its COMMIT (stale after a crash between the two).
 *
 * Sites are found by scanning the source (the `write(...)` callbacks, the SQL strings and
 * `crashPoint("...")` calls inside them); the generator throws when a family finds fewer
 * sites than {@linkcode FAMILY_FLOOR}, so a refactor cannot silently shrink the set.
 * Only the methods some cell exercises ({@linkcode CELL_METHODS} and
 * {@linkcode CELL_OPTIONAL_METHODS}) are mutated; the others are listed as out of scope. Equivalent mutants ({@linkcode EQUIVALENT}) are
 * generated but not judged.
 *
 * @module
 */
import { CELL_METHODS, CELL_OPTIONAL_METHODS, type StoreMethod } from "../../contract/target.ts";
import { STORE_CRASH_POINTS } from "../../../session_db/crash_points.ts";
import type { MutantCell } from "./catalogue.ts";
import { ACK_SUPPORT, anchor, CHECK_SUPPORT, COUNTER_SUPPORT, type Edit } from "./_support.ts";
import {
  type Conjunct,
  enclosingFunction,
  literalAt,
  matchBracket,
  oneLine,
  type Span,
  whereConjuncts,
} from "./_source_scan.ts";

/** A generated mutant family. */
export type Family =
  | "split"
  | "where"
  | "ack-before-commit"
  | "liveness"
  | "check-then-act"
  | "resume";

/** The families, in report order. */
export const FAMILIES: readonly Family[] = [
  "split",
  "where",
  "ack-before-commit",
  "liveness",
  "check-then-act",
  "resume",
];

/** One generated mutant. */
export interface GeneratedMutant {
  /** A stable id, e.g. `where:claimHandoff:handoff_state`. */
  id: string;
  /** Its family. */
  family: Family;
  /** The clause it breaks, in a few words. */
  breaks: string;
  /** The store methods whose behaviour it changes (their crash points are dropped). */
  methods: string[];
  /** The cells whose contract names one of `methods`. */
  cells: MutantCell[];
  /** Why it cannot be told apart from the reference, when it cannot. */
  equivalent?: string;
  /** Its target module. */
  target: URL;
}

/** A store method no cell calls, and the sites it would have had. */
export interface OutOfScope {
  /** The method (or the write operation's name). */
  method: string;
  /** The mutants it would have had, one id each. */
  ids: string[];
}

/** What {@linkcode generateMutants} returns. */
export interface GeneratedSet {
  /** The mutants, in family order. */
  mutants: GeneratedMutant[];
  /** Write operations of methods no cell exercises (not generated). */
  outOfScope: OutOfScope[];
}

/** The fewest mutants each family must find in the store today (a refactor that loses sites fails). */
export const FAMILY_FLOOR: Record<Family, number> = {
  split: 17,
  where: 30,
  "ack-before-commit": 13,
  liveness: 3,
  "check-then-act": 25,
  resume: 2,
};

const LAST = "the point is the last statement of the transaction: the second transaction is " +
  "empty, so a crash between the two leaves what a crash just after the reference's COMMIT " +
  "leaves (committed, not acknowledged)";
const SAME_TRANSACTION = "sweepRecoverable read the row (its state and fence) by the SELECT " +
  "in the same write transaction, which holds the write lock, and each UPDATE touches another " +
  "row, so the conjunct is implied by that SELECT and never false";

const PARENT_READ = "publishCompressionChild reads the parent in the same write transaction " +
  "and throws when its ended_at is set, so at the UPDATE ended_at IS NULL always holds";
const REOPEN_READ = "reopenOrphanedCompressionSession reads the session in the same write " +
  "transaction and returns false unless it ended by compression, so at the UPDATE " +
  "end_reason = 'compression' always holds";
const PENDING_FENCE = "a pending obligation's fence never changes (only leaving pending bumps " +
  "it, and nothing returns a row to pending), so any fence a caller read from a pending row " +
  "still matches; only a caller passing a fence it never read could tell";

const EXISTENCE_READ = "the only guard read before the write is that the session exists, and " +
  "no operation deletes a session, so the check's copy of it is never stale";
const PARENT_REREAD = "the write transaction reads the parent again itself and throws when it " +
  "has ended, so the conjunct's value from the check never decides";

const REOPEN_REREAD = "the write transaction reads the session again itself and returns false " +
  "unless it ended by compression, so the conjunct's value from the check never decides";

const RENEWAL_EXPIRY = "the holder conjunct stays in the renewal's write: a takeover after the " +
  "check changes the holder and the write refuses, and a lease that lapsed after the check " +
  "with nobody taking over is extended as an atomic renewal made at the check would be";

/** The equivalent mutants, with why no cell (nor any client) can tell them apart. */
export const EQUIVALENT: Readonly<Record<string, string>> = {
  "split:appendMessage:afterCount": LAST,
  "split:appendMessages:afterCount": LAST,
  "split:claimHandoff:afterUpdate": LAST,
  "split:publishCompressionChild:afterParentEnd": LAST,
  "split:rewindToMessage:afterCount": LAST,
  "split:forkSession:afterCount": LAST,
  "split:recordObligation:afterInsert": LAST,
  "split:markAttempting:afterUpdate": LAST,
  "split:markDelivered:afterUpdate": LAST,
  "where:publishCompressionChild:ended_at": PARENT_READ,
  "where:reopenOrphanedCompressionSession:end_reason": REOPEN_READ,
  "where:markAttempting:delivery_fence": PENDING_FENCE,
  "check-then-act:markAttempting:delivery_fence": PENDING_FENCE,
  "check-then-act:requestHandoff": EXISTENCE_READ,
  "check-then-act:endSession": EXISTENCE_READ,
  "check-then-act:recordObligation": EXISTENCE_READ,
  "check-then-act:publishCompressionChild:ended_at": PARENT_REREAD,
  "check-then-act:reopenOrphanedCompressionSession:end_reason": REOPEN_REREAD,
  "check-then-act:refreshCompressionLock:expires_at": RENEWAL_EXPIRY,
  "where:sweepRecoverable:outbox#1.state": SAME_TRANSACTION,
  "where:sweepRecoverable:outbox#1.delivery_fence": SAME_TRANSACTION,
  "where:sweepRecoverable:outbox#2.state": SAME_TRANSACTION,
  "where:sweepRecoverable:outbox#2.delivery_fence": SAME_TRANSACTION,
  "where:sweepRecoverable:outbox#3.state": SAME_TRANSACTION,
  "where:sweepRecoverable:outbox#3.delivery_fence": SAME_TRANSACTION,
};

const ROOT = new URL("../../../", import.meta.url);
/** The files whose write transactions are mutated. */
const OPERATION_FILES = [
  "session_db.ts",
  "_sessions.ts",
  "_handoff.ts",
  "_rotation.ts",
  "_rewind.ts",
  "_outbox.ts",
];
const CELL_IDS = Object.keys(CELL_METHODS).map(Number) as MutantCell[];

/** The folder the generated mutants are written to. */
export const GENERATED_DIR: URL = new URL(".cache/mutants/generated/", ROOT);

/**
 * The crash-point registry is shared, not copied: the cells' children add their own points
 * (`sender:afterSend`, ...) to the reference store's registry, and `SESSION_DB_CRASH_AT`
 * is checked against it; a copy would refuse their points as unknown.
 */
const SHARED = "crash_points.ts";
const SHARED_SHIM = `// Shared with the reference store (see generated.ts).
export * from "${"../".repeat(5)}session_db/crash_points.ts";
`;

interface Draft {
  id: string;
  family: Family;
  breaks: string;
  methods: string[];
  edits: Edit[];
}

interface WriteSite {
  file: string;
  /** The operation's name (a method, or the helper several methods share). */
  method: string;
  /** The store methods it serves. */
  methods: string[];
  receiver: string;
  /** The `write` token's span (for ack-before-commit). */
  call: Span;
  /** The callback's text span. */
  body: Span;
}

function cellsOf(methods: string[]): MutantCell[] {
  return CELL_IDS.filter((cell) =>
    methods.some((m) =>
      (CELL_METHODS[cell] as readonly string[]).includes(m) ||
      (CELL_OPTIONAL_METHODS[cell] ?? []).includes(m as StoreMethod)
    )
  );
}

function writeSites(file: string, src: string): WriteSite[] {
  const out: WriteSite[] = [];
  for (const match of src.matchAll(/(this\.#conn|\bconn)\.write\(/g)) {
    const open = match.index + match[0].length - 1;
    const end = matchBracket(src, open);
    const operation = src.slice(open + 1, src.indexOf(",", open));
    // A literal compared in a condition (`state === "failed" ? ...`) is not a name.
    const named = [...operation.matchAll(/"(\w+)"(?!\s*\?)/g)].map((m) => m[1]!);
    const method = named.length === 1 ? named[0]! : enclosingFunction(src, match.index);
    out.push({
      file,
      method,
      methods: named.length ? named : [method],
      receiver: match[1]!,
      call: { start: match.index + match[1]!.length + 1, end: open },
      body: { start: open + 1, end: end - 1 },
    });
  }
  return out;
}

function splitCode(receiver: string): string {
  // A busy BEGIN retries here, not through write(): a retry there would re-run the
  // first transaction's statements, a second change.
  return `${receiver}.stmt("COMMIT").run(); /* mutant: split */
    for (const started = Date.now();;) {
      try {
        ${receiver}.stmt("BEGIN IMMEDIATE").run();
        break;
      } catch (error) {
        const code = (error as { code?: number }).code;
        if ((code !== 5 && code !== 6) || Date.now() - started > 60_000) throw error;
      }
    }`;
}

/** (a) Every crash point inside a write site's transaction: split there into two. */
function splitDrafts(site: WriteSite, body: string): Draft[] {
  const out: Draft[] = [];
  for (const point of body.matchAll(/crashPoint\("([\w]+):([\w]+)"\);/g)) {
    if (point[1] !== site.method) {
      throw new Error(
        `Crash point "${point[1]}:${point[2]}" lies in ${site.method}'s transaction`,
      );
    }
    const start = site.body.start + point.index;
    out.push({
      id: `split:${point[1]}:${point[2]}`,
      family: "split",
      breaks: `commits ${site.method}'s transaction at ${point[2]} and begins another`,
      methods: site.methods,
      edits: [{
        file: site.file,
        start,
        end: start + point[0].length,
        text: splitCode(site.receiver),
      }],
    });
  }
  return out;
}

/** (b) Every conjunct of every UPDATE/DELETE inside a write site's transaction, dropped. */
function whereDrafts(site: WriteSite, src: string, guarded: Span[]): Draft[] {
  const out: Draft[] = [];
  const body = src.slice(site.body.start, site.body.end);
  const statements: { table: string; sql: string; at: number }[] = [];
  for (const call of body.matchAll(/\.stmt\(\s*(?=["`])/g)) {
    const literal = literalAt(src, site.body.start + call.index + call[0].length);
    const head = /^\s*(?:UPDATE|DELETE\s+FROM)\s+(\w+)/i.exec(literal.text);
    if (!head || /^\s*(BEGIN|COMMIT|ROLLBACK)/.test(literal.text)) continue;
    statements.push({ table: head[1]!, sql: literal.text, at: literal.start + 1 });
    guarded.push(literal);
  }
  // Names unique within the operation: column, else table.column, else table#k.column.
  const all = statements.flatMap((statement, i) =>
    whereConjuncts(statement.sql).map((conjunct) => ({
      statement,
      conjunct,
      k: statements.slice(0, i + 1).filter((s) => s.table === statement.table).length,
    }))
  );
  const count = <T>(list: T[], value: T) => list.filter((v) => v === value).length;
  for (const { statement, conjunct, k } of all) {
    const { table } = statement;
    const name = count(all.map((c) => c.conjunct.column), conjunct.column) === 1
      ? conjunct.column
      : count(statements.map((s) => s.table), table) === 1
      ? `${table}.${conjunct.column}`
      : `${table}#${k}.${conjunct.column}`;
    out.push({
      id: `where:${site.method}:${name}`,
      family: "where",
      breaks: `${site.method}: "${oneLine(statement.sql)}" without "${oneLine(conjunct.text)}"`,
      methods: site.methods,
      edits: [{
        file: site.file,
        start: statement.at + conjunct.start,
        end: statement.at + conjunct.end,
        text: `(${conjunct.text} OR 1)`,
      }],
    });
    const checked = checkedConjunct(src, site, statement, conjunct, name);
    if (checked) out.push(checked);
  }
  return out;
}

function drafts(sources: Map<string, string>): { drafts: Draft[]; sites: WriteSite[] } {
  const out: Draft[] = [];
  const sites = OPERATION_FILES.flatMap((file) => writeSites(file, sources.get(file)!));
  const guarded: Span[] = [];
  for (const site of sites) {
    const src = sources.get(site.file)!;
    const body = src.slice(site.body.start, site.body.end);
    out.push(...splitDrafts(site, body));
    out.push(...whereDrafts(site, src, guarded));
    // (e) check-then-act: the guard read in a transaction of its own before the write
    out.push(...checkThenActDraft(site, body));
    // (d) the next message id from a counter recovery can leave stale
    const resume = resumeDraft(src, site, body);
    if (resume) out.push(resume);
    // (c) the acknowledgement before COMMIT
    out.push({
      id: `ack-before-commit:${site.method}`,
      family: "ack-before-commit",
      breaks: `${site.method} returns before COMMIT (the next write commits it)`,
      methods: site.methods,
      edits: [{ file: site.file, ...site.call, text: "writeAckBeforeCommit" }, ...ACK_SUPPORT()],
    });
  }
  // Every UPDATE/DELETE of the operations must lie inside a write transaction.
  for (const file of OPERATION_FILES) {
    const src = sources.get(file)!;
    for (const m of src.matchAll(/["`]\s*(UPDATE|DELETE FROM) \w+/g)) {
      if (!guarded.some((s) => s.start === m.index)) {
        throw new Error(`${file}: "${m[0]}" at offset ${m.index} lies outside a write transaction`);
      }
    }
  }
  out.push(...liveness(sources, sites));
  return { drafts: out, sites };
}

/** A guard read before the first write of a transaction: a stale copy of it changes the act. */
const GUARD_READ =
  /\.(?:get|value|all|values)\s*[<(]|\brequire\w+\(|\breadLock\(|\.session\(|\bactiveIds\(/;
/** Each table's primary key: a conjunct `<key> = ?` names the one row a statement writes. */
const ROW_KEYS: Record<string, string> = {
  sessions: "id",
  outbox: "obligation_id",
  compression_locks: "session_id",
};

/**
 * Check-then-act at a write site: the operation runs once in a transaction of its own,
 * rolled back, to check its guards, and again in the write transaction with what the check
 * saw. `check-then-act:<method>`: the guard reads (those before the first write) return
 * what the check read; `check-then-act:<method>:<column>`: that conjunct of a single-row
 * UPDATE/DELETE holds in the write exactly when the whole statement changed the row in the
 * check. With nobody writing between the two transactions each behaves as the reference.
 */
function checkThenActDraft(site: WriteSite, body: string): Draft[] {
  const out: Draft[] = [];
  const write = { file: site.file, ...site.call };
  const firstWrite = body.indexOf(".run(");
  if (GUARD_READ.test(firstWrite < 0 ? body : body.slice(0, firstWrite))) {
    out.push({
      id: `check-then-act:${site.method}`,
      family: "check-then-act",
      breaks: `${site.method} checks its guards in a transaction of its own, then writes`,
      methods: site.methods,
      edits: [{ ...write, text: "checkThenWriteReplaying" }, ...CHECK_SUPPORT()],
    });
  }
  return out;
}

/** Check-then-act on one guard conjunct of a single-row UPDATE/DELETE, named as `where`. */
function checkedConjunct(
  src: string,
  site: WriteSite,
  statement: { table: string; sql: string; at: number },
  conjunct: Conjunct,
  name: string,
): Draft | undefined {
  const key = new RegExp(`^${ROW_KEYS[statement.table] ?? "(?!)"}\\s*=\\s*\\?$`);
  const conjuncts = whereConjuncts(statement.sql);
  if (key.test(conjunct.text) || !conjuncts.some((c) => key.test(c.text))) return undefined;
  const replace = (text: string) =>
    JSON.stringify(
      statement.sql.slice(0, conjunct.start) + text + statement.sql.slice(conjunct.end),
    );
  const literal = literalAt(src, statement.at - 1);
  return {
    id: `check-then-act:${site.method}:${name}`,
    family: "check-then-act",
    breaks: `${site.method} reads "${
      oneLine(conjunct.text)
    }" in a transaction of its own, then writes`,
    methods: site.methods,
    edits: [
      { file: site.file, ...site.call, text: "checkThenWrite" },
      // stmt(<literal>) -> checkedStmt(<as is>, <conjunct held>, <conjunct not held>)
      {
        file: site.file,
        start: literal.end,
        end: literal.end,
        text: `, ${replace(`(${conjunct.text} OR 1)`)}, ${replace(`(${conjunct.text} AND 0)`)}`,
      },
      { file: site.file, ...stmtCallBefore(src, literal.start), text: "checkedStmt" },
      ...CHECK_SUPPORT(),
    ],
  };
}

/** The span of the `stmt` token of the `.stmt(` call whose argument starts at `at`. */
function stmtCallBefore(src: string, at: number): Span {
  const open = src.lastIndexOf("stmt(", at);
  if (open < 0 || src.slice(open + "stmt(".length, at).trim() !== "") {
    throw new Error(`Cannot find the stmt( call of the statement at offset ${at}`);
  }
  return { start: open, end: open + "stmt".length };
}

/**
 * A resume breaker at a write site that inserts messages. The mutant store takes every
 * message id from a counter in `state_meta`, advanced inside each transaction that inserts
 * (a correct design); at this site alone the counter is advanced in a transaction of its
 * own after the operation's COMMIT. A crash between the two leaves the counter behind the
 * rows: the recovered state reads back whole, and the first insert after recovery takes an
 * id already used (refused).
 */
function resumeDraft(src: string, site: WriteSite, body: string): Draft | undefined {
  if (!/\.insertMessage\(/.test(body)) return undefined;
  const close = site.body.end; // the write call's ")"
  const head = src.slice(0, site.call.start - site.receiver.length - 1);
  if (src[close + 1] !== ";" || /\breturn\s*$/.test(head)) {
    throw new Error(`${site.file}: ${site.method}'s write is not a statement of its own`);
  }
  const callback = site.body.start + body.indexOf("=> {") + "=> {".length;
  if (callback < site.body.start + "=> {".length) {
    throw new Error(`${site.file}: ${site.method}'s write callback has no block body`);
  }
  return {
    id: `resume:${site.method}:messages.id`,
    family: "resume",
    breaks:
      `${site.method} advances the message id counter after its COMMIT (stale after a crash between the two)`,
    methods: site.methods,
    edits: [
      {
        file: site.file,
        start: callback,
        end: callback,
        text: ` ${site.receiver}.deferMessageCounter();`,
      },
      {
        file: site.file,
        start: close + 2,
        end: close + 2,
        text: ` ${site.receiver}.commitNextMessageId();`,
      },
      ...COUNTER_SUPPORT(),
    ],
  };
}

/** The callers, through write callbacks, of a function. */
function callers(sources: Map<string, string>, sites: WriteSite[], fn: string): string[] {
  const call = new RegExp(`\\b${fn}\\(`);
  return sites.filter((s) => call.test(sources.get(s.file)!.slice(s.body.start, s.body.end)))
    .flatMap((s) => s.methods);
}

function liveness(sources: Map<string, string>, sites: WriteSite[]): Draft[] {
  const out: Draft[] = [];
  const all = new Set<string>();
  for (const file of OPERATION_FILES) {
    const src = sources.get(file)!;
    for (const m of src.matchAll(/\bprocessAlive\(([^()]*(?:\([^()]*\))?[^()]*)\)/g)) {
      const fn = enclosingFunction(src, m.index);
      const own = sites.filter((s) => s.method === fn).flatMap((s) => s.methods);
      const methods = own.length ? own : callers(sources, sites, fn);
      if (!methods.length) throw new Error(`processAlive in ${fn} is reached by no write`);
      methods.forEach((method) => all.add(method));
      out.push({
        id: `liveness:${fn}`,
        family: "liveness",
        breaks: `${fn} treats a dead process as alive`,
        methods,
        edits: [{ file, start: m.index, end: m.index + m[0].length, text: "true" }],
      });
    }
  }
  const process = sources.get("process.ts")!;
  const head = "export function processAlive(pid: number): boolean {";
  const at = process.indexOf(head);
  if (at < 0) throw new Error(`process.ts: "${head}" not found`);
  out.push({
    id: "liveness:processAlive",
    family: "liveness",
    breaks: "processAlive answers true for every pid",
    methods: [...all],
    edits: [{
      file: "process.ts",
      start: at,
      end: at + head.length,
      text: `export function processAlive(_pid: number): boolean {
  return true; // mutant: liveness off
}
export function processAliveReference(pid: number): boolean {`,
    }],
  });
  return out;
}

/** The source files copied into each mutant: the store's and `internal/`, tests left out. */
async function readSources(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (dir: string, prefix: string) => {
    for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
      if (entry.isDirectory && entry.name !== "testdata") {
        await walk(`${dir}${entry.name}/`, `${prefix}${entry.name}/`);
      } else if (
        entry.isFile && entry.name.endsWith(".ts") && !entry.name.endsWith("_test.ts") &&
        entry.name !== "_test_helpers.ts"
      ) {
        out.set(`${prefix}${entry.name}`, await Deno.readTextFile(new URL(dir + entry.name, ROOT)));
      }
    }
  };
  await walk("session_db/", "");
  await walk("internal/", "../internal/");
  return out;
}

function apply(src: string, edits: Edit[]): string {
  const sorted = edits.map((e) => anchor(src, e)).sort((a, b) => b.start - a.start);
  let out = src;
  for (const edit of sorted) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

async function writeIfChanged(url: URL, text: string): Promise<void> {
  try {
    if (await Deno.readTextFile(url) === text) return;
  } catch {
    // Missing: write it.
  }
  await Deno.mkdir(new URL(".", url), { recursive: true });
  // Atomic, so that a concurrent run (the test and the task) never reads half a file.
  const temp = new URL(`${url.pathname.split("/").pop()}.${Deno.pid}.tmp`, url);
  await Deno.writeTextFile(temp, text);
  await Deno.rename(temp, url);
}

function targetModule(draft: Draft): string {
  return `// Generated mutant ${draft.id}: ${draft.breaks}.
// Written by cells/testdata/mutants/generated.ts; do not edit.
import { crashPoints as storeCrashPoints, SessionDB } from "./session_db/mod.ts";

const CHANGED = ${JSON.stringify(draft.methods)};

export function openStore(path: string, options: { journalMode?: "wal" | "delete" }): SessionDB {
  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
}

// The store's crash points minus those of the changed methods: a generated mutant keeps
// no crash point in what it changes.
export function crashPoints(): string[] {
  return storeCrashPoints().filter((p) => !CHANGED.some((m) => p.startsWith(\`\${m}:\`)));
}
`;
}

/**
 * Finds every site, writes each in-scope mutant (only those `wanted` selects) under
 * {@linkcode GENERATED_DIR}, and returns the set.
 *
 * @param wanted Which mutants to write (default: all); the set returned is always whole.
 * @returns The mutants and the out-of-scope methods.
 * @throws When a family finds fewer sites than its floor, or a site cannot be delimited.
 */
export async function generateMutants(
  wanted: (id: string) => boolean = () => true,
): Promise<GeneratedSet> {
  const sources = await readSources();
  const found = drafts(sources).drafts;
  const seen = new Set<string>();
  for (const draft of found) {
    if (seen.has(draft.id)) throw new Error(`Two generated mutants are named "${draft.id}"`);
    seen.add(draft.id);
  }
  for (const point of STORE_CRASH_POINTS) {
    if (!point.endsWith(":afterCommit") && !seen.has(`split:${point}`)) {
      throw new Error(`Crash point "${point}" was not found inside a write transaction`);
    }
  }
  for (const id of Object.keys(EQUIVALENT)) {
    if (!seen.has(id)) throw new Error(`Equivalent mutant "${id}" is no longer generated`);
  }
  const mutants: GeneratedMutant[] = [];
  const outOfScope = new Map<string, string[]>();
  for (const draft of found) {
    const cells = cellsOf(draft.methods);
    if (!cells.length) {
      for (const method of draft.methods) {
        outOfScope.set(method, [...outOfScope.get(method) ?? [], draft.id]);
      }
      continue;
    }
    const target = new URL(
      `${draft.id.replaceAll(":", "_").replaceAll("#", "-")}/target.ts`,
      GENERATED_DIR,
    );
    mutants.push({
      id: draft.id,
      family: draft.family,
      breaks: draft.breaks,
      methods: draft.methods,
      cells,
      ...(EQUIVALENT[draft.id] ? { equivalent: EQUIVALENT[draft.id] } : {}),
      target,
    });
    if (!wanted(draft.id)) continue;
    const byFile = Map.groupBy(draft.edits, (e) => e.file);
    for (const [file, text] of sources) {
      const edits = byFile.get(file);
      if (file === SHARED && edits) throw new Error(`${SHARED} is shared, never mutated`);
      const copy = file === SHARED ? SHARED_SHIM : edits ? apply(text, edits) : text;
      await writeIfChanged(new URL(`session_db/${file}`, target), copy);
    }
    await writeIfChanged(target, targetModule(draft));
  }
  for (const family of FAMILIES) {
    const count = mutants.filter((m) => m.family === family).length;
    if (count < FAMILY_FLOOR[family]) {
      throw new Error(
        `The ${family} family found ${count} mutants, fewer than its floor ${
          FAMILY_FLOOR[family]
        }: a site pattern no longer matches the store (update generated.ts)`,
      );
    }
  }
  mutants.sort((a, b) => FAMILIES.indexOf(a.family) - FAMILIES.indexOf(b.family));
  return {
    mutants,
    outOfScope: [...outOfScope].map(([method, ids]) => ({ method, ids })),
  };
}
