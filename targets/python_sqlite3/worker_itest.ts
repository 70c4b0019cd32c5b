// The Python worker store: the protocol's answers and typed errors, its crash is its
// client's crash, and the cells judge it (cells 1 and 2 on this process's leg; every cell,
// leg and tier: `deno task conformance --target targets/python_sqlite3/target.ts`).
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { currentLeg } from "../../harness/legs.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { CELLS } from "../../cells/register.ts";
import { runDefinitions } from "../../cells/engine/run_definitions.ts";
import { exists } from "../../internal/fs.ts";
import {
  FIXED_SQLITE_VERSION,
  fixedSqlitePath,
  sqliteLibraryVersion,
} from "../../runner/sqlite_build.ts";
import { childPermissions, openPythonStore, openStore } from "./target.ts";
import { testFolder } from "../../internal/_test_folder.ts";
import { fromFileUrl } from "../../internal/path.ts";
import { openWorkerStore } from "./worker_client.ts";

const python = childPermissions().run?.[0] ?? "";
const ignore = !python.startsWith("/") || Deno.build.os !== "linux";
const options = { ignore, sanitizeResources: false, sanitizeOps: false };
const target = new URL("./target.ts", import.meta.url);

Deno.test({
  name: "the Python worker answers each request, errors typed by name, and exits on close",
  ...options,
  async fn() {
    const store = await openStore(`${testFolder()}/store.db`, {
      journalMode: "delete",
    });
    strictEqual(store.journalMode, "delete");
    await store.createSession("s1");
    deepStrictEqual(
      [
        await store.appendMessage("s1", { role: "user", content: "m0" }),
        await store.appendMessage("s1", { role: "assistant", content: "m1" }),
      ],
      [1, 2],
    );
    deepStrictEqual((await store.getMessages("s1")).map((m) => m.content), ["m0", "m1"]);
    strictEqual(await store.getSession!("none"), undefined);
    deepStrictEqual(await store.checkInvariants!(), []);
    strictEqual(await store.requestHandoff!("s1", "cli"), true);
    strictEqual(await store.claimHandoff!("s1"), true);
    strictEqual(await store.claimHandoff!("s1"), false);
    await rejects(
      Promise.resolve(store.appendMessage("none", { role: "user", content: "x" })),
      (error: Error) => error.name === "SessionNotFoundError",
    );
    await store.close();
  },
});

Deno.test({
  name: "a worker that logs to stdout besides its answers: its lines go to stderr, answers hold",
  ...options,
  async fn() {
    const worker = fromFileUrl(new URL("./worker.py", import.meta.url));
    // The worker as it is, with a log line printed to stdout before every answer.
    const code = [
      "import runpy, sys",
      `sys.argv = [${JSON.stringify(worker)}]`,
      "real = sys.stdout.write",
      "sys.stdout.write = lambda text: (real('[worker] answering\\n'), real(text))[1]",
      `runpy.run_path(${JSON.stringify(worker)}, run_name="__main__")`,
    ].join("\n");
    const store = await openWorkerStore(
      { program: python, args: ["-c", code] },
      `${testFolder()}/store.db`,
      {},
    );
    await store.createSession("s1");
    strictEqual(await store.appendMessage("s1", { role: "user", content: "m0" }), 1);
    deepStrictEqual((await store.getMessages("s1")).map((m) => m.content), ["m0"]);
    await store.close();
  },
});

/** A client process: opens the worker store on `<dir>/store.db`, creates "s1", runs `body`. */
function spawnClient(
  dir: string,
  body: string,
): { client: Deno.ChildProcess; stderr: Promise<string> } {
  const client = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { openStore } from ${JSON.stringify(target.href)};
const store = await openStore(${JSON.stringify(`${dir}/store.db`)}, {});
await store.createSession("s1");
${body}`,
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  return { client, stderr: new Response(client.stderr).text() };
}

Deno.test({
  name: "a worker killed by SIGKILL kills its client by SIGKILL: the store crashed",
  ...options,
  async fn() {
    const dir = testFolder();
    const { client, stderr } = spawnClient(
      dir,
      `Deno.writeTextFileSync(${JSON.stringify(`${dir}/worker`)}, String(store.workerPid));
for (let i = 0; ; i++) await store.appendMessage("s1", { role: "user", content: "m" + i });`,
    );
    await waitFor(() => {
      try {
        return Deno.readTextFileSync(`${dir}/worker`) !== "";
      } catch {
        return false;
      }
    }, { what: "the worker to start", deadlineMs: 30_000 });
    Deno.kill(Number(Deno.readTextFileSync(`${dir}/worker`)), "SIGKILL");
    const status = await client.status;
    strictEqual(status.signal, "SIGKILL", await stderr);
  },
});

Deno.test({
  name:
    "a request written to a worker just dead by SIGKILL kills its client by SIGKILL, not an error",
  ...options,
  async fn() {
    // The client kills its worker and waits (without yielding) until it is a zombie, its
    // pipes closed: the next request's write fails before the client learns of the death.
    const { client, stderr } = spawnClient(
      testFolder(),
      `const pid = store.workerPid;
Deno.kill(pid, "SIGKILL");
const end = performance.now() + 10_000;
while (!/^\\d+ \\(.*\\) Z/.test(Deno.readTextFileSync("/proc/" + pid + "/stat"))) {
  if (performance.now() > end) throw new Error("the worker never died");
}
await store.appendMessage("s1", { role: "user", content: "after" });`,
    );
    const status = await client.status;
    strictEqual(status.signal, "SIGKILL", `code ${status.code}: ${await stderr}`);
  },
});

for (const cell of [1, 2] as const) {
  Deno.test({
    name: `cell ${cell} judges the Python worker store, and it passes`,
    ...options,
    async fn() {
      const [outcome] = await runDefinitions(
        await CELLS[cell]({ target, leg: currentLeg(), keepEvidence: false }),
      );
      ok(outcome?.status === "PASS" || outcome?.status === "SKIP", outcome?.detail);
      if (outcome?.status === "SKIP") console.log(`cell ${cell}: ${outcome.detail}`);
    },
  });
}

// LD_PRELOAD splits its list at spaces and colons: the leg's library under such a folder
// never loaded, and the worker ran on Python's own SQLite instead.
const fixed = fixedSqlitePath();
const pythonsSqlite = ignore ? undefined : new TextDecoder().decode(
  new Deno.Command(python, { args: ["-I", "-c", "import sqlite3; print(sqlite3.sqlite_version)"] })
    .outputSync().stdout,
).trim();
Deno.test({
  name: "the worker runs on the leg's library from a folder whose path holds a space",
  ...options,
  ignore: ignore || !exists(fixed) || sqliteLibraryVersion(fixed) === pythonsSqlite,
  async fn() {
    const dir = testFolder();
    await Deno.mkdir(`${dir}/lib dir`);
    await Deno.symlink(fixed, `${dir}/lib dir/libsqlite3.so`);
    // The flag comes after any the target adds: the worker takes the last one.
    const store = await openPythonStore(`${dir}/store.db`, { journalMode: "delete" }, {
      extra: ["--sqlite-library", `${dir}/lib dir/libsqlite3.so`],
    });
    strictEqual(store.sqliteVersion, FIXED_SQLITE_VERSION);
    await store.close();
  },
});

// A worker that buffers its stdout answers nothing until it exits: its client says what it
// waits for on stderr, where a cell's failure (the store did not open) shows it.
Deno.test({
  name: "a client waiting on a silent worker says so on stderr",
  ...options,
  async fn() {
    const silent = "import sys; sys.stdin.readline(); sys.stdin.readline()";
    const client = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `import { openWorkerStore } from ${
          JSON.stringify(new URL("./worker_client.ts", import.meta.url).href)
        };
openWorkerStore({ program: ${JSON.stringify(python)}, args: ["-c", ${JSON.stringify(silent)}] }, ${
          JSON.stringify(`${testFolder()}/store.db`)
        }, {}).catch(() => {});
await new Promise((resolve) => setTimeout(resolve, 6_000));
Deno.exit(0);`,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode((await client).stderr);
    ok(
      /no answer to open \(request 1\) after 5000 ms: a worker must end each answer with a newline and flush its stdout/
        .test(stderr),
      stderr,
    );
  },
});
