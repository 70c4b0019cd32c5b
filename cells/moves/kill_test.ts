import { strictEqual } from "node:assert/strict";
import { treeLibraries } from "../../harness/process_tree.ts";
import { processStopped } from "./kill.ts";

// A cell's test holds fewer permissions than Deno asks for /proc (all of them): what the
// stop series read there must still be read, else they stop waiting for a stop and may
// continue a process before its stop took effect (it then stays stopped).
Deno.test({
  name: "with a cell's permissions, a stopped process reads stopped, a running one not",
  ignore: Deno.build.os !== "linux",
  permissions: { read: true, write: true, run: [Deno.execPath()], ffi: treeLibraries() },
  async fn() {
    const dir = await Deno.makeTempDir();
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const f = Deno.openSync(${
          JSON.stringify(`${dir}/db`)
        }, { read: true, write: true, create: true });
f.lockSync(true);
Deno.writeTextFileSync(${JSON.stringify(`${dir}/ready`)}, "1");
await new Promise((resolve) => setTimeout(resolve, 30_000));`,
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      const end = performance.now() + 30_000;
      while (performance.now() < end) {
        try {
          Deno.statSync(`${dir}/ready`);
          break;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
      strictEqual(processStopped(child.pid), false, "a running child reads stopped");
      child.kill("SIGSTOP");
      const stopEnd = performance.now() + 10_000;
      while (processStopped(child.pid) !== true && performance.now() < stopEnd) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      strictEqual(processStopped(child.pid), true, "a stopped child does not read stopped");
      child.kill("SIGCONT");
    } finally {
      child.kill("SIGKILL");
      await child.status;
    }
  },
});
