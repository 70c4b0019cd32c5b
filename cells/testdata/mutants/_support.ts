// The support code generated mutants add to their copy of the store: anchors (a text found
// exactly once in a file, replaced by a text that keeps it and adds the support), inert
// until a mutated site calls it. Used by generated.ts.
import type { Span } from "./_source_scan.ts";

/** One change to a copied file: a span replaced by a text (an anchor when `start` is -1). */
export interface Edit extends Span {
  /** The file, relative to `session_db/`. */
  file: string;
  /** The new text, or the anchor's name. */
  text: string;
}

/** The support every check-then-act mutant adds to its `_connection.ts` (inert elsewhere). */
export function CHECK_SUPPORT(): Edit[] {
  return ["check-module-anchor", "check-stmt-anchor", "check-import-anchor"].map((text) => ({
    file: "_connection.ts",
    start: -1,
    end: -1,
    text,
  }));
}

/**
 * The counter every resume mutant's store keeps: message ids from `state_meta`, advanced
 * inside each inserting transaction (a fork's copy too), except where the site defers it.
 */
export function COUNTER_SUPPORT(): Edit[] {
  return [
    { file: "_connection.ts", start: -1, end: -1, text: "resume-anchor" },
    { file: "_connection.ts", start: -1, end: -1, text: "write-reset-anchor" },
    { file: "_rewind.ts", start: -1, end: -1, text: "fork-counter-anchor" },
  ];
}

/**
 * The inert support every ack-before-commit mutant adds to its `_connection.ts`: a
 * `writeAckBeforeCommit` that leaves the transaction open, and `write`/`close` that
 * commit one left open (never the case in the reference). Spans are filled in by
 * {@linkcode anchor} when the copy is written.
 */
export function ACK_SUPPORT(): Edit[] {
  return [
    { file: "_connection.ts", start: -1, end: -1, text: "write-anchor" },
    { file: "_connection.ts", start: -1, end: -1, text: "close-anchor" },
  ];
}

const ACK_ANCHORS: Record<string, { find: string; text: string }> = {
  "write-anchor": {
    find:
      "  write<T>(operation: string, fn: () => T, deadlineMs = this.#options.busyDeadlineMs): T {\n" +
      "    const db = this.database();\n",
    text: `  /** Mutant: like write, but returns before COMMIT; the next write or close commits. */
  writeAckBeforeCommit<T>(_operation: string, fn: () => T, deadlineMs = this.#options.busyDeadlineMs): T {
    const db = this.database();
    if (db.inTransaction) this.stmt("COMMIT").run();
    const started = performance.now();
    for (;;) {
      try {
        this.stmt("BEGIN IMMEDIATE").run();
        break;
      } catch (error) {
        if (!isBusy(error) || performance.now() - started >= deadlineMs) throw error;
        sleepSync(20 + Math.random() * 130);
      }
    }
    try {
      return fn(); // acknowledged, not committed
    } catch (error) {
      if (db.inTransaction) this.stmt("ROLLBACK").run();
      throw error;
    }
  }

  write<T>(operation: string, fn: () => T, deadlineMs = this.#options.busyDeadlineMs): T {
    const db = this.database();
    if (db.inTransaction) this.stmt("COMMIT").run(); // an acknowledged one, left open
`,
  },
  "check-module-anchor": {
    find: "export function now(): number {\n",
    text: `/** Mutant: what a check-then-act operation's check saw, for its write. */
const checkThenAct = {
  mode: "off" as "off" | "check" | "act",
  replay: false,
  wrote: false,
  reads: [] as unknown[],
  at: 0,
  held: [] as boolean[],
  heldAt: 0,
};

/** Mutant: reads before the first write recorded by the check, replayed by the act. */
function replaying(statement: Statement): Statement {
  const state = checkThenAct;
  return new Proxy(statement, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      if (key === "run") {
        return (...args: unknown[]) => {
          state.wrote = true;
          return value.apply(target, args);
        };
      }
      if (!["get", "value", "all", "values"].includes(String(key)) || state.wrote) {
        return value.bind(target);
      }
      return (...args: unknown[]) => {
        if (state.mode === "check") {
          const result = value.apply(target, args);
          state.reads.push(result);
          return result;
        }
        return state.at < state.reads.length ? state.reads[state.at++] : value.apply(target, args);
      };
    },
  });
}

export function now(): number {
`,
  },
  "check-stmt-anchor": {
    find: "  stmt(sql: string): Statement {\n",
    text: `  stmt(sql: string): Statement {
    const statement = this.#prepared(sql);
    return checkThenAct.replay && checkThenAct.mode !== "off" ? replaying(statement) : statement;
  }

  /** Mutant: a guarded statement whose conjunct holds in the write as it did in the check. */
  checkedStmt(sql: string, held: string, notHeld: string): { run(...args: StatementParameters): number } {
    return {
      run: (...args: StatementParameters) => {
        if (checkThenAct.mode === "act") {
          const was = checkThenAct.held[checkThenAct.heldAt++] ?? false;
          return this.stmt(was ? held : notHeld).run(...args);
        }
        const changed = this.stmt(sql).run(...args);
        if (checkThenAct.mode === "check") checkThenAct.held.push(changed > 0);
        return changed;
      },
    };
  }

  /** Mutant: the operation checked in a transaction of its own (rolled back), then written. */
  checkThenWrite<T>(operation: string, fn: () => T, deadlineMs = this.#options.busyDeadlineMs): T {
    return this.#checkThenWrite(false, operation, fn, deadlineMs);
  }

  /** Mutant: as checkThenWrite, the write's guard reads answered by the check's. */
  checkThenWriteReplaying<T>(operation: string, fn: () => T, deadlineMs = this.#options.busyDeadlineMs): T {
    return this.#checkThenWrite(true, operation, fn, deadlineMs);
  }

  #checkThenWrite<T>(replay: boolean, operation: string, fn: () => T, deadlineMs: number): T {
    const checked = new Error("checked");
    Object.assign(checkThenAct, { mode: "check", replay, reads: [], held: [] });
    try {
      this.write(operation, () => {
        checkThenAct.wrote = false;
        checkThenAct.reads = [];
        checkThenAct.held = [];
        fn();
        throw checked;
      }, deadlineMs);
    } catch (error) {
      if (error !== checked) {
        checkThenAct.mode = "off";
        throw error;
      }
    }
    checkThenAct.mode = "act";
    try {
      return this.write(operation, () => {
        checkThenAct.wrote = false;
        checkThenAct.at = 0;
        checkThenAct.heldAt = 0;
        return fn();
      }, deadlineMs);
    } finally {
      checkThenAct.mode = "off";
    }
  }

  #prepared(sql: string): Statement {
`,
  },
  "check-import-anchor": {
    find: 'import type { Statement } from "./sqlite/statement.ts";\n',
    text: 'import type { Statement, StatementParameters } from "./sqlite/statement.ts";\n',
  },
  "write-reset-anchor": {
    find:
      "  write<T>(operation: string, fn: () => T, deadlineMs = this.#options.busyDeadlineMs): T {\n" +
      "    const db = this.database();\n",
    text:
      "  write<T>(operation: string, fn: () => T, deadlineMs = this.#options.busyDeadlineMs): T {\n" +
      "    const db = this.database();\n" +
      "    this.#deferred = false; // a deferring operation that threw defers nothing after it\n",
  },
  "fork-counter-anchor": {
    find: "    ).run(newId, sessionId, atMessageId);\n",
    text: "    ).run(newId, sessionId, atMessageId);\n    conn.syncMessageCounter();\n",
  },
  "resume-anchor": {
    find: "  /** Inserts one message row (the caller updates the count); returns its row id. */\n" +
      "  insertMessage(sessionId: string, message: NewMessage): number {\n",
    text: `  #pendingNext: number | undefined;
  #deferred = false;

  /** Mutant: the next message id, from the counter (or max + 1 on a fresh file). */
  #nextId(): number {
    if (this.#pendingNext !== undefined) return this.#pendingNext;
    const stored = this.stmt("SELECT value FROM state_meta WHERE key = 'next_message_id'")
      .value<[string]>();
    if (stored) return Number(stored[0]);
    return this.stmt("SELECT coalesce(max(id), 0) + 1 FROM messages").value<[number]>()![0];
  }

  #keepCounter(next: number): void {
    this.stmt(
      \`INSERT INTO state_meta (key, value) VALUES ('next_message_id', ?)
       ON CONFLICT(key) DO UPDATE SET value = excluded.value\`,
    ).run(String(next));
  }

  /** Mutant: this operation advances the counter only after its COMMIT. */
  deferMessageCounter(): void {
    this.#deferred = true;
    this.#pendingNext = undefined;
  }

  /** Mutant: the deferred counter, in a transaction of its own. */
  commitNextMessageId(): void {
    const next = this.#pendingNext;
    this.#deferred = false;
    this.#pendingNext = undefined;
    if (next !== undefined) this.write("keep the next message id", () => this.#keepCounter(next));
  }

  /** Mutant: after rows inserted with the rowid (a fork's copy), the counter follows. */
  syncMessageCounter(): void {
    const max = this.stmt("SELECT coalesce(max(id), 0) FROM messages").value<[number]>()![0];
    if (max >= this.#nextId()) this.#keepCounter(max + 1);
  }

  /** Inserts one message row with the counter's id (the caller updates the count). */
  insertMessage(sessionId: string, message: NewMessage): number {
    const id = this.#nextId();
    this.stmt(
      \`INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)\`,
    ).run(
      id,
      sessionId,
      message.role,
      message.content,
      message.toolCallId ?? null,
      message.toolCalls ?? null,
      message.toolName ?? null,
      now(),
    );
    if (this.#deferred) this.#pendingNext = id + 1;
    else this.#keepCounter(id + 1);
    return id;
  }

  /** The reference's insert, unused by this mutant. */
  insertMessageByRowid(sessionId: string, message: NewMessage): number {
`,
  },
  "close-anchor": {
    find: "    const db = this.#db;\n    if (!db) return;\n",
    text: "    const db = this.#db;\n    if (!db) return;\n" +
      '    if (db.inTransaction) db.exec("COMMIT"); // an acknowledged one, left open\n',
  },
};

/** The edit with its anchor found in `src` (an edit with a span is returned as it is). */
export function anchor(src: string, edit: Edit): Edit {
  if (edit.start >= 0) return edit;
  const { find, text } = ACK_ANCHORS[edit.text]!;
  const at = src.indexOf(find);
  if (at < 0 || src.indexOf(find, at + 1) >= 0) {
    throw new Error(`${edit.file}: the ${edit.text} was not found exactly once`);
  }
  return { ...edit, start: at, end: at + find.length, text };
}
