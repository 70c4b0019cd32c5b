// The root of a process tree for the tree tests: starts a daemon in its own session
// (`setsid -f`: double-forked, so orphaned at once) and one as its own child in a new
// session (`detached`), writes their pids to `daemons` and `ready`, then waits to be
// killed (bounded), or with `selfkill` kills itself as a crash point does.
import { killSelf } from "../self_kill.ts";

const [mode = "wait"] = Deno.args;
const dir = Deno.cwd();
const marker = `${dir}/orphan.pid`;
// The orphan writes its own pid (it is not our child: we never learn it otherwise).
await new Deno.Command("setsid", {
  args: ["-f", "sh", "-c", `echo $$ > ${marker}; exec sleep 300`],
  stdin: "null",
  stdout: "null",
  stderr: "null",
}).output();
const own = new Deno.Command("sleep", {
  args: ["300"],
  detached: true,
  stdin: "null",
  stdout: "null",
  stderr: "null",
}).spawn();
const deadline = Date.now() + 10_000;
while (Date.now() < deadline) {
  try {
    if (Deno.readTextFileSync(marker).trim()) break;
  } catch {
    // Not written yet.
  }
}
const orphan = Number(Deno.readTextFileSync(marker).trim());
Deno.writeTextFileSync(`${dir}/daemons`, JSON.stringify([orphan, own.pid]));
if (mode === "selfkill") killSelf();
Deno.writeTextFileSync(`${dir}/ready`, String(Deno.pid));
setTimeout(() => Deno.exit(3), 30_000);
