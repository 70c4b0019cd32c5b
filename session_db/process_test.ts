import { ok } from "node:assert/strict";
import { processAlive } from "./process.ts";

Deno.test("processAlive: a live process is alive; the id of one of its threads is no process", async () => {
  // A child with threads of its own (Deno's runtime starts several); it names them
  // (reading /proc of another process would need --allow-all here).
  const script = `
    const tasks = () => [...Deno.readDirSync("/proc/self/task")].map((t) => Number(t.name));
    const end = performance.now() + 10_000;
    while (tasks().length < 2 && performance.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    console.log(JSON.stringify(tasks()));
    await new Promise((resolve) => setTimeout(resolve, 30_000));`;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", script],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    let line = "";
    while (!line.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      line += value;
    }
    const thread = (JSON.parse(line) as number[]).find((tid) => tid !== child.pid);
    ok(thread !== undefined, `the child ${child.pid} started no thread`);
    ok(processAlive(child.pid), "the child itself reads as dead");
    // kill(tid, 0) succeeds for it: a dead owner whose pid now names this thread read alive.
    ok(!processAlive(thread), `thread ${thread} of ${child.pid} reads as a live process`);
  } finally {
    child.kill("SIGKILL");
    await reader.cancel();
    await child.status;
  }
  ok(!processAlive(child.pid), "a reaped child reads as alive");
});
