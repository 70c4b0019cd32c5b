// The recorder's hazard records, from a C program that commits each on purpose (and the
// near misses that are none): a close that drops POSIX locks (not OFD ones, not with no
// lock), a forked child's write, a second SQLite library, an unlink of a file another
// process has open.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { buildRecorder } from "./build.ts";
import { hazards, readLog } from "./log.ts";
import { recorderEnv } from "./record.ts";
import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
import { fromFileUrl } from "../internal/path.ts";
import { testFolder } from "../internal/_test_folder.ts";

const built = await buildRecorder();
const ignore = !built.ok;
const work = testFolder({ prefix: "hazards-" });
const program = `${work}/hazards`;
if (built.ok) {
  const source = fromFileUrl(new URL("./testdata/hazards.c", import.meta.url));
  const cc = await new Deno.Command(Deno.env.get("CC") ?? "cc", {
    args: ["-O1", "-o", program, source, "-ldl"],
  }).output();
  ok(cc.success, new TextDecoder().decode(cc.stderr));
}
const FIXED = new URL("../.cache/sqlite/3.53.2/libsqlite3.so", import.meta.url);

async function run(mode: string, extra: string[] = []): Promise<string[]> {
  const dir = testFolder({ dir: work });
  Deno.mkdirSync(`${dir}/db`);
  const file = `${dir}/db/store.db`;
  Deno.writeTextFileSync(file, "");
  const log = `${dir}/fs.log`;
  const held = mode === "unlink" ? Deno.openSync(file, { read: true }) : undefined;
  try {
    const output = await new Deno.Command(program, {
      args: [mode, file, ...extra],
      env: recorderEnv({
        library: built.ok ? built.path : "",
        watched: `${dir}/db`,
        log,
        pulledFiles: true,
      }),
    }).output();
    strictEqual(output.code, 0, `${mode} exited with ${output.code}`);
  } finally {
    held?.close();
  }
  return hazards(readLog(log));
}

Deno.test(
  { name: "hazard: a close while another descriptor holds POSIX locks", ignore },
  async () => {
    const lines = await run("posix-close");
    strictEqual(lines.length, 1, lines.join("\n"));
    match(
      lines[0]!,
      /^#\d+ close ".*\/store\.db" \(handle 2\) while handle 1 \(descriptor \d+\) holds fcntl locks on it: the process's locks on the file are dropped$/,
    );
  },
);

Deno.test({ name: "hazard: none for OFD locks or with no lock held", ignore }, async () => {
  deepStrictEqual(await run("ofd-close"), []);
  deepStrictEqual(await run("plain-close"), []);
});

Deno.test({ name: "hazard: a forked child's write before exec", ignore }, async () => {
  const lines = await run("fork-write");
  strictEqual(lines.length, 1, lines.join("\n"));
  match(
    lines[0]!,
    /^#\d+ write ".*\/store\.db" \(handle 1\) in process \d+, forked from \d+ with it open, before exec/,
  );
});

Deno.test({ name: "hazard: a second SQLite library, not the same one twice", ignore }, async () => {
  const system = sqliteLibraryPath();
  deepStrictEqual(await run("dlopen", [system, system]), []);
  let fixed = "";
  try {
    fixed = Deno.realPathSync(FIXED);
  } catch { /* not built here */ }
  if (!fixed || fixed === Deno.realPathSync(system)) return;
  const lines = await run("dlopen", [system, fixed]);
  strictEqual(lines.length, 1, lines.join("\n"));
  match(lines[0]!, /^#\d+ dlopen ".*3\.53\.2.*" while ".*" is loaded: a second SQLite library/);
});

Deno.test({ name: "hazard: an unlink of a file another process has open", ignore }, async () => {
  const lines = await run("unlink");
  strictEqual(lines.length, 1, lines.join("\n"));
  match(
    lines[0]!,
    new RegExp(`^#\\d+ unlink ".*/store\\.db" while process ${Deno.pid} has it open`),
  );
});
