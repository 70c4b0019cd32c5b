// The leg probe tells what a store really runs on from evidence (the libraries its process
// mapped, its file's header), and a store that cannot open by its own error: the deadline
// only when one passed with the child alive.
import { DatabaseSync } from "node:sqlite";
import { ok, strictEqual } from "node:assert/strict";
import { liveChildren } from "../../harness/child.ts";
import { TASK_PERMISSIONS } from "../../harness/permissions.ts";
import { currentLeg } from "../../harness/legs.ts";
import { sqliteLibraryPath } from "../../session_db/sqlite/database.ts";
import { PROBE_THREW, thrownAt } from "./_probe_line.ts";
import {
  engineLabel,
  lastWriterVersion,
  mapsLibrary,
  probeStore,
  type StoreProbe,
} from "./probe_store.ts";
import { prefixDurabilityCell } from "../prefix_durability/cell.ts";
import { fromFileUrl } from "../../internal/path.ts";
import { testFolder } from "../../internal/_test_folder.ts";

const options = { sanitizeResources: false, sanitizeOps: false };
const leg = { ...currentLeg(), name: "default" as const };
const cells = (path: string) => new URL(`../${path}`, import.meta.url);
const faulty = (name: string) => cells(`testdata/faulty/${name}.ts`);
const nodeSqliteTarget = new URL("../../targets/node_sqlite.ts", import.meta.url);

/** The SQLite bundled in Deno (`node:sqlite`), as a store on its own SQLite runs it. */
function bundledVersion(): string {
  const db = new DatabaseSync(":memory:");
  try {
    return String(db.prepare("SELECT sqlite_version() AS v").get()!.v);
  } finally {
    db.close();
  }
}

function opened(probe: StoreProbe): StoreProbe {
  ok(!probe.openError, probe.openError?.message);
  return probe;
}

Deno.test({
  name: "the reference store runs on this project's binding, on the leg's library",
  ...options,
  async fn() {
    const probe = opened(await probeStore(cells("reference_target.ts"), { leg }));
    strictEqual(probe.engine.kind, "binding");
    strictEqual(probe.engine.sqliteVersion, leg.sqliteVersion);
    strictEqual(probe.engine.library, leg.library);
    ok(probe.methods.includes("publishCompressionChild"), probe.methods.join(", "));
    strictEqual(engineLabel(probe.engine), `SQLite ${leg.sqliteVersion}`);
  },
});

Deno.test({
  name: "a store on node:sqlite runs its own SQLite, named by its file's header, no library",
  ...options,
  async fn() {
    const probe = opened(await probeStore(nodeSqliteTarget, { leg }));
    strictEqual(probe.engine.kind, "own-sqlite");
    strictEqual(probe.engine.sqliteVersion, bundledVersion());
    strictEqual(probe.engine.library, undefined, "it names a library it never loaded");
    strictEqual(engineLabel(probe.engine), `own SQLite ${bundledVersion()}`);
    // The definitions say so in their names: no leg library's version.
    const [definition] = await prefixDurabilityCell({ target: nodeSqliteTarget, leg });
    ok(definition!.name.endsWith(`· default · own SQLite ${bundledVersion()}]`), definition!.name);
  },
});

Deno.test({
  name: "a store whose file is not SQLite runs on no SQLite",
  ...options,
  async fn() {
    const target = cells("testdata/jsonl_store/target.ts");
    const probe = opened(await probeStore(target, { leg }));
    strictEqual(probe.engine.kind, "not-sqlite");
    strictEqual(probe.onDisk, "not-sqlite");
    const [definition] = await prefixDurabilityCell({ target, leg });
    ok(definition!.name.endsWith("· default · not SQLite]"), definition!.name);
  },
});

Deno.test({
  name: "a store whose openStore throws is reported by its own error, at once",
  ...options,
  async fn() {
    const probe = await probeStore(faulty("open_throws"), { leg, openDeadlineMs: 30_000 });
    const failure = probe.openError!;
    strictEqual(failure.kind, "threw");
    strictEqual(failure.stage, "openStore");
    strictEqual(failure.exitCode, PROBE_THREW);
    ok(
      failure.message.startsWith(
        'openStore threw: Error: Cannot open session database "',
      ),
      failure.message,
    );
    ok(failure.message.includes("the file is locked by another program"), failure.message);
    ok(!/deadline|Gave up/.test(failure.message), `deadline advice: ${failure.message}`);
    ok(failure.elapsedMs < 30_000, `${failure.elapsedMs} ms`);
    strictEqual(probe.engine.kind, "unknown");
    strictEqual(liveChildren().length, 0, "a child outlived its test");
  },
});

Deno.test({
  name: "a store whose appends answer no id is reported by its answer and the contract",
  ...options,
  async fn() {
    const failure = (await probeStore(faulty("append_returns_nothing"), { leg })).openError!;
    strictEqual(failure.kind, "answered");
    ok(
      failure.message.startsWith("appendMessage answered undefined, not the new message's id"),
      failure.message,
    );
    ok(failure.message.includes("cells/contract/store.ts"), failure.message);
  },
});

Deno.test({
  name: "a store that ends its process while opening is reported by its exit and stderr",
  ...options,
  async fn() {
    const failure = (await probeStore(faulty("open_exits"), { leg })).openError!;
    strictEqual(failure.kind, "exited");
    strictEqual(failure.exitCode, 1);
    ok(failure.message.includes("the probe child exited with code 1 after"), failure.message);
    ok(failure.message.includes("is not mine, giving up"), failure.message);
    ok(!/deadline/.test(failure.message), failure.message);
  },
});

Deno.test({
  name: "a target that does not load is reported by the loader's error",
  ...options,
  async fn() {
    const failure = (await probeStore(faulty("no_open_store"), { leg })).openError!;
    strictEqual(failure.kind, "threw");
    strictEqual(failure.stage, "load");
    ok(failure.message.startsWith("loading the target threw: TargetError: "), failure.message);
  },
});

Deno.test("the header names its last writer's version; a non-SQLite file none", () => {
  const dir = testFolder();
  const db = new DatabaseSync(`${dir}/a.db`);
  db.exec("CREATE TABLE t (x)");
  db.close();
  strictEqual(lastWriterVersion(`${dir}/a.db`), bundledVersion());
  Deno.writeTextFileSync(`${dir}/b.jsonl`, '{"not":"sqlite"}\n'.repeat(10));
  strictEqual(lastWriterVersion(`${dir}/b.jsonl`), undefined);
  strictEqual(lastWriterVersion(`${dir}/missing.db`), undefined);
});

Deno.test("this process maps the SQLite library it loaded, and no other", () => {
  if (Deno.build.os !== "linux") return;
  // The binding loaded it for currentLeg(); a library nobody loaded is mapped by nobody.
  strictEqual(mapsLibrary(Deno.pid, sqliteLibraryPath()), true);
  strictEqual(mapsLibrary(Deno.pid, `${testFolder()}/libsqlite3.so`), false);
});

// `deno task matrix` runs the cells with the tasks' permissions, not -A: Deno reads /proc
// only with every permission, so the probe must find the maps another way. A store on its
// own SQLite whose version is the leg library's (node:sqlite's 3.53.2 beside the fixed
// build) must still read as its own.
Deno.test({
  name: "without every permission, a store on its own SQLite of the leg's version is its own",
  ...options,
  async fn() {
    const script = fromFileUrl(new URL("../testdata/probe_engine.ts", import.meta.url));
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-lock",
        ...TASK_PERMISSIONS,
        script,
        nodeSqliteTarget.href,
        leg.library,
        bundledVersion(),
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    strictEqual(output.code, 0, new TextDecoder().decode(output.stderr));
    const probe = JSON.parse(text.trim().split("\n").at(-1)!) as StoreProbe;
    strictEqual(probe.engine.kind, "own-sqlite", text);
  },
});

Deno.test("a permission refusal is marked where the probe catches it, by name or by Deno's words", () => {
  const refused = new Error('Requires read access to "/x"');
  refused.name = "NotCapable";
  strictEqual(thrownAt("openStore", refused).permission, true);
  const wrapped = new Error("cannot open", { cause: refused });
  strictEqual(thrownAt("openStore", wrapped).permission, true);
  const imported = new TypeError(
    'Requires import access to "127.0.0.1:9", run again with the --allow-import flag',
  );
  strictEqual(thrownAt("load", imported).permission, true);
  strictEqual(thrownAt("openStore", new Error("file is not a database")).permission, false);
});
