// Preloaded into every spawned child (`--preload`) before its script: it dies with the
// process that spawned it (PR_SET_PDEATHSIG=SIGKILL, even while stopped), runs none of
// the script until it is in its tree's cgroup (cgroup mechanism) or keeps its orphaned
// descendants below it (proc mechanism: a child subreaper), and offers a self-kill that
// takes its whole tree (session_db/process.ts calls it for crash points).
import { Cgroup } from "./_cgroup.ts";
import {
  becomeSubreaper,
  libc,
  readText,
  sendSignal,
  setParentDeathSignal,
  SIGNALS,
} from "./_libc.ts";
import { allStats, descendantsIn, procStat, running } from "./_proc.ts";

interface Guard {
  parent: number;
  libc: string;
  token: string;
  cgroupDir?: string;
  cgroupPath?: string;
}

/** The global a crash point's self-kill looks for (see session_db/process.ts). */
const KILL_TREE = Symbol.for("session-cells.killTree");

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function fail(message: string): never {
  console.error(`child ${Deno.pid}: ${message}`);
  Deno.exit(70);
}

const raw = Deno.env.get("CELLS_TREE");
if (raw) {
  const guard = JSON.parse(raw) as Guard;
  const c = libc(guard.libc);
  if (!c) fail(`cannot load libc from ${guard.libc} through FFI`);
  setParentDeathSignal(c, SIGNALS.SIGKILL);
  // The parent died before the signal was armed: nobody is left to kill us.
  if (Deno.ppid !== guard.parent) sendSignal(c, Deno.pid, SIGNALS.SIGKILL);
  if (guard.cgroupPath) {
    // The parent moves us into the tree's cgroup right after the spawn; no code of the
    // script (so no process of the store) runs before we are in it.
    const end = performance.now() + 30_000;
    const inside = () =>
      readText(c, "/proc/self/cgroup")?.split("\n").includes(`0::${guard.cgroupPath}`);
    while (!inside()) {
      if (performance.now() > end) fail(`never moved into the cgroup ${guard.cgroupPath}`);
      pause(1);
    }
  } else {
    becomeSubreaper(c);
  }
  (globalThis as Record<symbol, unknown>)[KILL_TREE] = (): void => {
    if (guard.cgroupDir) {
      // No freeze first: it would freeze this process before it could kill. cgroup.kill
      // alone takes every member, forks racing it included, this process too.
      new Cgroup(c, guard.cgroupDir).kill();
    } else {
      // Stop every descendant until none is new, then kill them all and this process.
      const stopped = new Set<number>();
      for (let round = 0; round < 100; round++) {
        const stats = allStats(c);
        const fresh = descendantsIn(stats, [Deno.pid]).filter((pid) =>
          !stopped.has(pid) && running(stats.get(pid))
        );
        if (!fresh.length) break;
        for (const pid of fresh) {
          sendSignal(c, pid, SIGNALS.SIGSTOP);
          stopped.add(pid);
        }
        const end = performance.now() + 1_000;
        while (
          performance.now() < end && fresh.some((pid) => {
            const state = procStat(c, pid)?.state;
            return state !== undefined && !["T", "t", "Z", "X"].includes(state);
          })
        ) pause(1);
      }
      for (const pid of stopped) sendSignal(c, pid, SIGNALS.SIGKILL);
    }
    sendSignal(c, Deno.pid, SIGNALS.SIGKILL);
  };
}
