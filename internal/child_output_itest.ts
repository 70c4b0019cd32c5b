// A child's end is not held up by what it started: a process holding its pipes after it
// exited gets a grace, then the output so far is its output; a child whose pipes close
// gives all of it; what runs at the exit runs before the pipes are waited for.
import { deepStrictEqual, ok } from "node:assert/strict";
import { childOutput } from "./child_output.ts";

const decoder = new TextDecoder();

/** `sh -c script`, both pipes read. */
function shell(script: string): Deno.ChildProcess {
  return new Deno.Command("sh", {
    args: ["-c", script],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("a child whose pipes close gives all its output, none held", async () => {
  const output = await childOutput(shell("echo out; echo err >&2; exit 3"));
  deepStrictEqual(
    [decoder.decode(output.stdout), decoder.decode(output.stderr), output.code, output.held],
    ["out\n", "err\n", 3, false],
  );
});

Deno.test("a pipe a left process holds is let go after the grace, the output so far kept", async () => {
  const child = shell("echo before; sleep 30 & echo $! >&2");
  const started = performance.now();
  const output = await childOutput(child, { graceMs: 200 });
  const pid = Number(decoder.decode(output.stderr).trim());
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* gone */ }
  ok(performance.now() - started < 10_000, "held up past the grace");
  deepStrictEqual([decoder.decode(output.stdout), output.held, output.success], [
    "before\n",
    true,
    true,
  ]);
});

Deno.test({
  name: "what runs at the exit can end the process holding the pipes",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const child = shell("sleep 30 & wait");
    const holder = await firstChild(child.pid);
    // The shell alone: its sleep holds the pipes until the exit's action ends it.
    child.kill("SIGKILL");
    const output = await childOutput(child, {
      graceMs: 60_000,
      onExit: () => Deno.kill(holder, "SIGKILL"),
    });
    deepStrictEqual([output.signal, output.held], ["SIGKILL", false]);
  },
});

/** The first child of `pid` (from /proc), waited for up to 5 s. */
async function firstChild(pid: number): Promise<number> {
  const end = performance.now() + 5_000;
  while (performance.now() < end) {
    const text = await Deno.readTextFile(`/proc/${pid}/task/${pid}/children`).catch(() => "");
    const first = Number(text.trim().split(" ")[0]);
    if (first) return first;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`No child of ${pid} appeared within 5 s`);
}
