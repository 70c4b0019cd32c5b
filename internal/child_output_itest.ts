// A child's end is not held up by what it started: a process holding its pipes after it
// exited gets a grace, then the output so far is its output; a child whose pipes close
// gives all of it; what runs at the exit runs before the pipes are waited for.
import { deepStrictEqual, ok } from "node:assert/strict";
import { childOutput } from "./child_output.ts";

const decoder = new TextDecoder();

/** `sh -c script`, both pipes read. */
function shell(script: string): Deno.ChildProcess {
  // A clean environment: other files of the parallel run set variables in this process.
  return new Deno.Command("sh", {
    args: ["-c", script],
    clearEnv: true,
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
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

Deno.test("what runs at the exit can end the process holding the pipes", async () => {
  const pidFile = await Deno.makeTempFile();
  const child = shell(`sleep 30 & echo $! > ${pidFile}; wait`);
  const holder = await pidIn(pidFile);
  // The shell alone: its sleep holds the pipes until the exit's action ends it.
  child.kill("SIGKILL");
  const output = await childOutput(child, {
    graceMs: 60_000,
    onExit: () => {
      try {
        Deno.kill(holder, "SIGKILL");
      } catch { /* gone */ }
    },
  });
  await Deno.remove(pidFile);
  deepStrictEqual([output.signal, output.held], ["SIGKILL", false]);
});

/** The pid a shell wrote to `path`, waited for up to 10 s. */
async function pidIn(path: string): Promise<number> {
  const end = performance.now() + 10_000;
  while (performance.now() < end) {
    const pid = Number((await Deno.readTextFile(path)).trim());
    if (pid) return pid;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`No pid in ${path} within 10 s`);
}
