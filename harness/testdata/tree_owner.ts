// Stands in for a test process: spawns two trees (`tree_root.ts`, each with a daemon in
// its own session and an orphaned one), stops the second (SIGSTOP), writes every pid to
// `<dir>/pids` and waits to be SIGKILLed (bounded). Nothing of it may outlive it.
import { spawnChild } from "../child.ts";
import { sqliteLibraryPath } from "../../session_db/sqlite/database.ts";
import { TREE_PROGRAMS } from "./programs.ts";

const [dir = Deno.makeTempDirSync()] = Deno.args;
const roots = ["a", "b"].map((name) => {
  const runDir = `${dir}/${name}`;
  Deno.mkdirSync(runDir, { recursive: true });
  return {
    runDir,
    child: spawnChild({
      script: new URL("./tree_root.ts", import.meta.url),
      args: ["wait"],
      runDir,
      library: sqliteLibraryPath(),
      permissions: { run: TREE_PROGRAMS },
    }),
  };
});
const pids: number[] = [];
for (const { runDir, child } of roots) {
  const end = Date.now() + 30_000;
  for (;;) {
    try {
      Deno.statSync(`${runDir}/ready`);
      break;
    } catch {
      if (Date.now() > end) throw new Error(`no ready file: ${child.describe()}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  pids.push(child.pid, ...JSON.parse(Deno.readTextFileSync(`${runDir}/daemons`)) as number[]);
}
roots[1]!.child.signal("SIGSTOP");
Deno.writeTextFileSync(`${dir}/pids.tmp`, JSON.stringify(pids));
Deno.renameSync(`${dir}/pids.tmp`, `${dir}/pids`);
setTimeout(() => Deno.exit(3), 60_000);
