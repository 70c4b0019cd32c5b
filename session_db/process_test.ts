import { ok } from "node:assert/strict";
import { processAlive } from "./process.ts";

Deno.test("processAlive: a live process is alive; the id of one of its threads is no process", async () => {
  // A child with threads of its own (Deno's runtime starts several).
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", "await new Promise((resolve) => setTimeout(resolve, 30_000))"],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    const tasks = () => [...Deno.readDirSync(`/proc/${child.pid}/task`)].map((t) => Number(t.name));
    const end = performance.now() + 10_000;
    while (tasks().length < 2 && performance.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const thread = tasks().find((tid) => tid !== child.pid);
    ok(thread !== undefined, `the child ${child.pid} started no thread`);
    ok(processAlive(child.pid), "the child itself reads as dead");
    // kill(tid, 0) succeeds for it: a dead owner whose pid now names this thread read alive.
    ok(!processAlive(thread), `thread ${thread} of ${child.pid} reads as a live process`);
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
  ok(!processAlive(child.pid), "a reaped child reads as alive");
});
