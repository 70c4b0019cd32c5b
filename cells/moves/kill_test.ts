import { strictEqual } from "node:assert/strict";
import { treeLibraries } from "../../harness/process_tree.ts";
import { testFolder } from "../../internal/_test_folder.ts";
import { holdsLockIn, processStopped } from "./kill.ts";

// A cell's test holds fewer permissions than Deno asks for /proc (all of them): what the
// stop series read there must still be read, else they stop waiting for a stop and may
// continue a process before its stop took effect (it then stays stopped).
Deno.test({
  name: "with a cell's permissions, a stopped process reads stopped, a running one not",
  ignore: Deno.build.os !== "linux",
  permissions: { read: true, write: true, run: [Deno.execPath()], ffi: treeLibraries() },
  async fn() {
    const dir = testFolder();
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

// Under a tracer (strace, a debugger) a stopped process reads `t`, not `T`: it runs no
// code either, and a stop move that waited for `T` alone failed a correct store.
Deno.test({
  name: "a stopped process held by a tracer reads stopped",
  ignore: Deno.build.os !== "linux",
  async fn() {
    // The tracer starts the process it traces: a parent may trace its child wherever
    // ptrace is allowed at all (Yama's default scope).
    const tracer = new Deno.Command("python3", {
      args: [
        "-c",
        `import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    os.execvp("sleep", ["sleep", "30"])
PTRACE_SEIZE = 0x4206
if libc.ptrace(PTRACE_SEIZE, pid, None, None) != 0:
    os.kill(pid, 9)
    sys.exit(f"ptrace: errno {ctypes.get_errno()}")
print(pid, flush=True)
time.sleep(30)`,
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const reader = tracer.stdout.getReader();
    let traced = 0;
    try {
      const { value } = await reader.read();
      traced = Number(new TextDecoder().decode(value ?? new Uint8Array()).trim());
      if (!traced) {
        throw new Error(`Cannot trace a process: ${JSON.stringify(await tracer.status)}`);
      }
      strictEqual(processStopped(traced), false, "a traced running process reads stopped");
      Deno.kill(traced, "SIGSTOP");
      const end = performance.now() + 10_000;
      while (processStopped(traced) !== true && performance.now() < end) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      strictEqual(processStopped(traced), true, "a traced stopped process reads running");
    } finally {
      if (traced) Deno.kill(traced, "SIGKILL");
      tracer.kill("SIGKILL");
      await tracer.status;
      reader.releaseLock();
      await tracer.stdout.cancel();
      await tracer.stderr.cancel();
    }
  },
});

/** Whether this process may read `/proc/locks` (Deno asks for every permission). */
const locksReadable = (() => {
  try {
    Deno.readTextFileSync("/proc/locks");
    return true;
  } catch {
    return false;
  }
})();

// A store may make its path a folder and lock a file in it (LevelDB's LOCK): a stop that
// looked only at the files beside the database took its holder for one that blocks nobody.
// Run by `deno test -A`; said out loud where `/proc/locks` cannot be read.
Deno.test({
  name: `a lock on a file in a folder of the store's counts as held${
    locksReadable ? "" : " SKIP: /proc/locks needs --allow-all"
  }`,
  ignore: Deno.build.os !== "linux" || !locksReadable,
  fn() {
    const dir = testFolder();
    Deno.mkdirSync(`${dir}/store.db`);
    const lock = Deno.openSync(`${dir}/store.db/LOCK`, { read: true, write: true, create: true });
    try {
      strictEqual(holdsLockIn(Deno.pid, dir), false, "a lock read as held before it was taken");
      lock.lockSync(true);
      strictEqual(holdsLockIn(Deno.pid, dir, 3), true, "the lock in the folder was not seen");
    } finally {
      lock.close();
    }
  },
});
