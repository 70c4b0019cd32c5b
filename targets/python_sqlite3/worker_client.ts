/**
 * The client side of the worker line protocol (`docs/worker_protocol.md`): a store
 * whose writes another process makes (a worker in any language), driven over its stdin
 * and stdout, one JSON object per line. The store has exactly the methods the worker
 * says it offers; each returns once the worker's answer came, which for a write is after
 * its COMMIT returned. A worker that dies by SIGKILL is the store's crash: this process
 * then dies by SIGKILL too (its whole tree, in the cells' children).
 *
 * @example
 * ```ts
 * import { openWorkerStore } from "./worker_client.ts";
 * const worker = decodeURIComponent(new URL("./worker.py", import.meta.url).pathname);
 * const store = await openWorkerStore(
 *   { program: "python3", args: ["-I", worker] },
 *   `${Deno.makeTempDirSync()}/store.db`,
 *   { journalMode: "delete" },
 * );
 * await store.createSession("s1");
 * console.log(await store.appendMessage("s1", { role: "user", content: "hello" })); // 1
 * await store.close();
 * ```
 *
 * @module
 */
import { killSelf } from "../../harness/self_kill.ts";
import type { Store, StoreOptions } from "../../cells/contract/target.ts";

/**
 * How to start a worker.
 *
 * @example
 * ```ts
 * import type { WorkerCommand } from "./worker_client.ts";
 * const command: WorkerCommand = { program: "/usr/bin/python3", args: ["-I", "worker.py"] };
 * ```
 */
export interface WorkerCommand {
  /** The program (by absolute path, or a name on PATH), never a shell. */
  program: string;
  /** Its arguments. */
  args: string[];
  /** Start it in a session of its own (`setsid`), as a daemon would be. */
  detached?: boolean;
}

/**
 * What the worker said when it opened the database.
 *
 * @example
 * ```ts
 * import type { WorkerOpened } from "./worker_client.ts";
 * const opened: WorkerOpened = {
 *   methods: ["createSession", "appendMessage", "getMessages"],
 *   journalMode: "delete",
 *   journalModeReason: "as requested",
 *   sqliteVersion: "3.53.2",
 *   pid: 4242,
 * };
 * ```
 */
export interface WorkerOpened {
  /** The store methods it implements (`close` is always there). */
  methods: string[];
  /** The journal mode it runs in. */
  journalMode: string;
  /** Why (e.g. `as requested`, or the WAL-reset gate). */
  journalModeReason: string;
  /** The SQLite version it runs on (absent when not SQLite). */
  sqliteVersion?: string;
  /** Its pid. */
  pid: number;
}

/**
 * A store served by a worker: the methods it offers, and what it said at open.
 *
 * @example
 * ```ts
 * import type { WorkerStore } from "./worker_client.ts";
 * const why = (store: WorkerStore) => `${store.journalMode}: ${store.journalModeReason}`;
 * ```
 */
export type WorkerStore = Store & {
  readonly journalMode: string;
  readonly journalModeReason: string;
  readonly sqliteVersion: string | undefined;
  readonly workerPid: number;
};

/**
 * An error the worker answered with, named as the worker named it (the protocol's typed
 * errors, e.g. `BusyDeadlineError`), or `WorkerDiedError` when it died.
 *
 * @example
 * ```ts
 * import { WorkerError } from "./worker_client.ts";
 * const error = new WorkerError("BusyDeadlineError", "the database stayed locked");
 * console.log(error.name); // "BusyDeadlineError"
 * ```
 */
export class WorkerError extends Error {
  /** Creates the error with the worker's name for it. */
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

interface Pending {
  op: string;
  resolve(value: unknown): void;
  reject(error: Error): void;
  /** The timer that says the wait on stderr. */
  slow: ReturnType<typeof setTimeout>;
}

type Answer = { id: number; ok: true; result: unknown } | {
  id: number;
  ok: false;
  error: { name: string; message: string };
};

/** Methods whose `null` answer means "none" (`undefined` in the contract). */
const OPTIONAL_RESULTS = new Set(["getSession", "getObligation"]);
/** How long a broken pipe waits for the worker's end before it is reported as an error. */
const PIPE_DEATH_MS = 10_000;
/** How long a request waits before its wait is said on stderr (where a failure shows it). */
const SLOW_ANSWER_MS = 5_000;

class Connection {
  #process: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #pending = new Map<number, Pending>();
  #next = 1;
  #closing = false;
  #stderr = "";
  readonly exited: Promise<void>;

  constructor(command: WorkerCommand) {
    this.#process = new Deno.Command(command.program, {
      args: command.args,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
      ...(command.detached ? { detached: true } : {}),
    }).spawn();
    this.#writer = this.#process.stdin.getWriter();
    this.exited = Promise.all([this.#readAnswers(), this.#readStderr()]).then(() => this.#ended());
  }

  get pid(): number {
    return this.#process.pid;
  }

  async #readAnswers(): Promise<void> {
    let buffer = "";
    for await (const chunk of this.#process.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line.trim()) this.#line(line);
      }
    }
  }

  async #readStderr(): Promise<void> {
    for await (const chunk of this.#process.stderr.pipeThrough(new TextDecoderStream())) {
      this.#stderr = (this.#stderr + chunk).slice(-16 * 1024);
      // Seen in this process's stderr too, where the harness keeps a child's tail.
      console.error(chunk.trimEnd());
    }
  }

  /**
   * One line of the worker's stdout: an answer, or what the worker's program printed
   * there besides (a log line), passed on to stderr as its other output is.
   */
  #line(line: string): void {
    let answer: unknown;
    try {
      answer = JSON.parse(line);
    } catch {
      // not an answer
    }
    if (answer !== null && typeof answer === "object" && "id" in answer && "ok" in answer) {
      this.#answer(answer as Answer);
      return;
    }
    this.#stderr = (this.#stderr + `${line}\n`).slice(-16 * 1024);
    console.error(line);
  }

  #answer(answer: Answer): void {
    const pending = this.#pending.get(answer.id);
    if (!pending) return;
    this.#pending.delete(answer.id);
    clearTimeout(pending.slow);
    if (answer.ok) {
      const result = answer.result === null && OPTIONAL_RESULTS.has(pending.op)
        ? undefined
        : answer.result;
      pending.resolve(result);
    } else {
      pending.reject(new WorkerError(answer.error.name, answer.error.message));
    }
  }

  /** Waits for the worker's end (and #ended's verdict on it), at most `ms`. */
  async #exitedWithin(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#process.status,
      new Promise((resolve) => timer = setTimeout(resolve, ms)),
    ]);
    clearTimeout(timer);
  }

  async #ended(): Promise<void> {
    const status = await this.#process.status;
    if (this.#closing && status.success) return;
    // The worker crashed: so did the store, the way it crashed.
    if (status.signal === "SIGKILL") killSelf();
    const error = new WorkerError(
      "WorkerDiedError",
      `The worker (pid ${this.pid}) ended with ${
        status.signal ? `signal ${status.signal}` : `code ${status.code}`
      }${this.#stderr.trim() ? `: ${this.#stderr.trim()}` : ""}`,
    );
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.slow);
      pending.reject(error);
    }
    this.#pending.clear();
  }

  request(op: string, args: unknown[]): Promise<unknown> {
    const id = this.#next++;
    if (op === "close") this.#closing = true;
    return new Promise((resolve, reject) => {
      // A worker that buffers its stdout answers nothing until it exits: say so while waiting.
      const slow = setTimeout(() => {
        console.error(
          `worker_client: no answer to ${op} (request ${id}) after ${SLOW_ANSWER_MS} ms: a worker must end each answer with a newline and flush its stdout`,
        );
      }, SLOW_ANSWER_MS);
      this.#pending.set(id, { op, resolve, reject, slow });
      const line = new TextEncoder().encode(`${JSON.stringify({ id, op, args })}\n`);
      this.#writer.write(line).catch(async (error) => {
        this.#pending.delete(id);
        clearTimeout(slow);
        // A pipe broken by the worker's death: a SIGKILL is the store's crash, so this
        // process dies by it too (in #ended), never with this error first.
        await this.#exitedWithin(PIPE_DEATH_MS);
        reject(new WorkerError("WorkerDiedError", `Cannot reach the worker: ${error}`));
      });
    });
  }

  async close(): Promise<void> {
    await this.request("close", []);
    await this.#writer.close().catch(() => {});
    await this.exited;
  }
}

/**
 * Starts a worker, opens the database at `path` in the leg's journal mode, and returns
 * the store it serves.
 *
 * @param command The worker's program and arguments.
 * @param path The database file.
 * @param options The leg (`journalMode`: `wal`, `delete`, or the store's default).
 * @returns The store.
 * @throws {WorkerError} When the worker cannot start or cannot open the database.
 * @example
 * ```ts
 * import { openWorkerStore } from "./worker_client.ts";
 * const worker = decodeURIComponent(new URL("./worker.py", import.meta.url).pathname);
 * const path = `${Deno.makeTempDirSync()}/store.db`;
 * const store = await openWorkerStore({ program: "python3", args: ["-I", worker] }, path, {});
 * console.log(store.journalModeReason);
 * await store.close();
 * ```
 */
export async function openWorkerStore(
  command: WorkerCommand,
  path: string,
  options: StoreOptions,
): Promise<WorkerStore> {
  const connection = new Connection(command);
  let opened: WorkerOpened;
  try {
    opened = await connection.request("open", [path, options.journalMode ?? null]) as WorkerOpened;
  } catch (error) {
    await connection.close().catch(() => {});
    throw error;
  }
  const store: Record<string, unknown> = {
    journalMode: opened.journalMode,
    journalModeReason: opened.journalModeReason,
    sqliteVersion: opened.sqliteVersion,
    workerPid: opened.pid,
  };
  for (const method of opened.methods) {
    if (method === "close" || method === "open") continue;
    store[method] = (...args: unknown[]) => connection.request(method, args);
  }
  store.close = () => connection.close();
  return store as unknown as WorkerStore;
}
