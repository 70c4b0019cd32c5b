// The suite imported by URL: this repository is served over HTTP on 127.0.0.1 by a
// child (this process needs no network), and a scratch project in a temp dir imports
// `mod.ts` from it, registers the cells against (a) the reference store by URL and
// (b) a store written in the scratch project, and runs `deno test` with
// `--allow-import=<that host>` only and a fresh DENO_DIR, so every module, the cells'
// child scripts included, must come from the server.
import { ok, strictEqual } from "node:assert/strict";
import { packageRoot } from "../harness/child.ts";
import { waitFor } from "../harness/wait_for.ts";
import { exists as existsSync } from "../internal/fs.ts";
import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
import { TASK_PERMISSIONS } from "../harness/permissions.ts";
import { testFolder } from "../internal/_test_folder.ts";

const SERVER_START_MS = 30_000;
const SCRATCH_RUN_MS = 240_000;
const REAP_MS = 10_000;

const root = packageRoot();

/** The scratch project's own store: another schema, its own SQL, over the served binding. */
function ownStore(base: string): string {
  return `import type { Store, StoreOptions } from "${base}/mod.ts";
import { Database } from "${base}/session_db/mod.ts";

export function openStore(path: string, options: StoreOptions): Store {
  const db = new Database(path);
  db.setBusyTimeout(5000);
  // DELETE unless the leg asks for WAL: safe on WAL-reset-vulnerable SQLite.
  db.exec(\`PRAGMA journal_mode = \${options.journalMode ?? "delete"}\`);
  db.exec("PRAGMA synchronous = FULL");
  db.exec(
    "CREATE TABLE IF NOT EXISTS entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, " +
      "conversation TEXT NOT NULL, role TEXT NOT NULL, body TEXT)",
  );
  const insert = db.prepare("INSERT INTO entries (conversation, role, body) VALUES (?, ?, ?)");
  const select = db.prepare(
    "SELECT seq, role, body FROM entries WHERE conversation = ? ORDER BY seq",
  );
  return {
    createSession() {},
    appendMessage(sessionId, message) {
      db.exec("BEGIN IMMEDIATE");
      try {
        insert.run(sessionId, message.role, message.content);
        db.exec("COMMIT");
      } catch (error) {
        if (db.inTransaction) db.exec("ROLLBACK");
        throw error;
      }
      return Number(db.lastInsertRowId);
    },
    getMessages(sessionId) {
      return select.all<{ seq: number; role: string; body: string | null }>(sessionId)
        .map((row) => ({ id: Number(row.seq), role: row.role, content: row.body }));
    },
    close() {
      insert.finalize();
      select.finalize();
      db.close();
    },
  };
}
`;
}

/** Resolves with the promise, or rejects after `ms` (after calling `onTimeout`). */
async function within<T>(promise: Promise<T>, ms: number, what: string, onTimeout = () => {}) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          onTimeout();
          reject(new Error(`Gave up waiting for ${what} after ${ms} ms`));
        }, ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Collects a byte stream as text. */
function collect(stream: ReadableStream<Uint8Array>, sink: (text: string) => void): Promise<void> {
  return stream.pipeThrough(new TextDecoderStream()).pipeTo(new WritableStream({ write: sink }));
}

/** Environment a Deno child needs to find its cache and tools. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["HOME", "PATH", "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** The repository served over HTTP from a child, with what it printed. */
interface RepoServer {
  base: string;
  host: string;
  /** The server's request log so far. */
  log(): string;
  /** Kills it and waits for its end. */
  stop(): Promise<void>;
}

async function serveRepo(repo: string): Promise<RepoServer> {
  const server = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-config",
      "--no-lock",
      "--no-prompt",
      "--allow-net=127.0.0.1",
      `--allow-read=${repo}`,
      new URL("./testdata/serve_repo.ts", import.meta.url).href,
      repo,
    ],
    clearEnv: true,
    env: baseEnv(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let serverOut = "";
  let serverLog = "";
  let serverEnd: Deno.CommandStatus | undefined;
  const serverDone = Promise.all([
    collect(server.stdout, (text) => serverOut += text),
    collect(server.stderr, (text) => serverLog += text),
    server.status.then((status) => serverEnd = status),
  ]);
  const stop = async () => {
    try {
      server.kill("SIGKILL");
    } catch {
      // Already exited: serverDone reports how.
    }
    await within(serverDone, REAP_MS, "the repository server to exit");
  };
  try {
    await waitFor(() => {
      if (serverEnd) {
        throw new Error(
          `The repository server exited with code ${serverEnd.code}: ${serverLog.trim()}`,
        );
      }
      return /^listening \d+\n/.test(serverOut);
    }, {
      what: "the repository server's port",
      deadlineMs: SERVER_START_MS,
      observed: () => JSON.stringify({ stdout: serverOut, stderr: serverLog }),
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const host = `127.0.0.1:${Number(/^listening (\d+)\n/.exec(serverOut)![1])}`;
  return { base: `http://${host}`, host, log: () => serverLog, stop };
}

/** Writes the scratch project: the reference and a tiny store of its own, both by URL. */
async function writeScratch(scratch: string, base: string): Promise<void> {
  await Deno.writeTextFile(
    `${scratch}/reference_test.ts`,
    `import { registerCells } from "${base}/mod.ts";\n\n` +
      `await registerCells({ target: "${base}/cells/reference_target.ts", cells: [1, 3] });\n`,
  );
  await Deno.writeTextFile(`${scratch}/tiny_store.ts`, ownStore(base));
  await Deno.writeTextFile(
    `${scratch}/own_store_test.ts`,
    `import { registerCells } from "${base}/mod.ts";\n\n` +
      `await registerCells({ target: new URL("./tiny_store.ts", import.meta.url), cells: [1] });\n`,
  );
}

/** The scratch project's `deno test`, importing only from the served host. */
async function runScratch(
  scratch: string,
  host: string,
): Promise<{ output: string; code: number; ms: number }> {
  // The default leg on this process's library: the scratch run proves the import
  // path, not the legs, so a leg this process runs on must not turn it into skips.
  const run = new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      `--allow-import=${host}`,
      // The recorder's C source is fetched from the host (no module imports it).
      `--allow-net=${host}`,
      ...TASK_PERMISSIONS,
      // Both files at once: a user's run may be parallel, and it halves this test.
      "--parallel",
      "reference_test.ts",
      "own_store_test.ts",
    ],
    cwd: scratch,
    clearEnv: true,
    env: {
      ...baseEnv(),
      // A cache of its own: nothing fetched before counts.
      DENO_DIR: `${scratch}/deno_dir`,
      DENO_SQLITE_PATH: sqliteLibraryPath(),
      CELLS_EVIDENCE_DIR: `${scratch}/evidence`,
      // The recorder is built here, from the served source, not found in a cache.
      XDG_CACHE_HOME: `${scratch}/cache`,
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const started = performance.now();
  const [status] = await within(
    Promise.all([
      run.status,
      collect(run.stdout, (text) => output += text),
      collect(run.stderr, (text) => output += text),
    ]),
    SCRATCH_RUN_MS,
    "the scratch project's deno test",
    () => run.kill("SIGKILL"),
  );
  return { output, code: status.code, ms: performance.now() - started };
}

/** Every cell passed, every check ran, and the children loaded their scripts by URL. */
function checkScratch(
  run: { output: string; code: number },
  scratch: string,
  serverLog: string,
): void {
  const { output } = run;
  const where = `scratch project kept at ${scratch}; output:\n${output.slice(-8000)}`;
  const summary = /(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed/.exec(output);
  ok(summary, `No test summary in the scratch run: ${where}`);
  strictEqual(Number(summary[3]), 0, `The scratch run had failures: ${where}`);
  ok(Number(summary[2]) >= 3, `Expected 3 passing cells, got ${summary[2]}: ${where}`);
  strictEqual(run.code, 0, `The scratch run exited with ${run.code}: ${where}`);
  for (
    const [cell, label] of [
      ["1 prefix durability", "reference_target"],
      ["3 rotation atomicity", "reference_target"],
      ["1 prefix durability", "tiny_store"],
    ]
  ) {
    // --parallel prefixes each line with its file: "./reference_test.ts => ".
    const line = `^(?:\\S+ => )?cell ${cell} \\[${label} · default · [^\\]]+\\] \\.\\.\\. ok`;
    ok(new RegExp(line, "m").test(output), `cell ${cell} on ${label} did not pass: ${where}`);
  }
  // Every check ran: by URL as from a clone (the kill series needs the recorder).
  const skipped = output.match(/"[\w.:]+":"not run: [^"]*"/g);
  strictEqual(skipped, null, `Checks not run by URL: ${skipped?.join("; ")}: ${where}`);
  ok(
    existsSync(`${scratch}/cache/session-cells/.cache/recorder`),
    `The recorder was not built from the served source: ${where}`,
  );
  // The children's scripts are only ever loaded by the children: served means the
  // children imported them by URL (the cache was empty).
  for (
    const path of [
      "/mod.ts",
      "/cells/reference_target.ts",
      "/cells/prefix_durability/children/prefix_writer.ts",
    ]
  ) {
    ok(serverLog.includes(`GET ${path}\n`), `The server never served ${path}: ${serverLog}`);
  }
}

Deno.test({
  name: "the cells run when imported by URL, children included",
  ignore: root === undefined,
  async fn() {
    const started = performance.now();
    const server = await serveRepo(root!.replace(/\/$/, ""));
    const serverMs = performance.now() - started;
    let scratch: string | undefined;
    let keepScratch = false;
    try {
      scratch = await Deno.realPath(testFolder({ prefix: "url-import-" }));
      // Kept as evidence unless everything below passes.
      keepScratch = true;
      await writeScratch(scratch, server.base);
      const run = await runScratch(scratch, server.host);
      checkScratch(run, scratch, server.log());
      keepScratch = false;
      console.log(
        `  server up in ${Math.round(serverMs)} ms; scratch deno test ${Math.round(run.ms)} ms; ${
          server.log().split("\n").filter(Boolean).length
        } modules served`,
      );
    } finally {
      await server.stop();
      if (scratch && !keepScratch) await Deno.remove(scratch, { recursive: true });
      else if (scratch) console.error(`scratch project kept: ${scratch}`);
    }
  },
});
