// The watchdog of a run scope (process_tree.ts): started in its own session by the
// process that owns the scope, it waits on a pidfd for that process to exit, then kills
// whatever of the scope is left (its cgroup, or every process carrying its marker) and
// removes the cgroups. It holds nothing of the owner's, so it never keeps it alive.
//
// Argument: a JSON object { parent, parentStart, libc, cgroup? | token? }.
import { Cgroup } from "./_cgroup.ts";
import { libc, openPidfd, sendSignal, SIGNALS, waitReadable } from "./_libc.ts";
import { allStats, descendantsIn, environValue, procStat, running } from "./_proc.ts";

interface Config {
  parent: number;
  parentStart: number;
  libc: string;
  cgroup?: string;
  token?: string;
}

const config = JSON.parse(Deno.args[0] ?? "{}") as Config;
const c = libc(config.libc);
if (!c) Deno.exit(2);

// The pidfd names the very process; the start time proves the pid was not reused before
// the pidfd was opened. Either failing means the owner is gone already.
const pidfd = openPidfd(c, config.parent);
const stat = procStat(c, config.parent);
if (pidfd >= 0 && stat?.startTime === config.parentStart && running(stat)) {
  waitReadable(c, pidfd);
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

if (config.cgroup) {
  const group = new Cgroup(c, config.cgroup);
  group.freeze();
  group.kill();
  const end = performance.now() + 10_000;
  while (group.populated() && performance.now() < end) pause(5);
  group.remove();
} else if (config.token) {
  const token = config.token;
  const members = () => {
    const stats = allStats(c);
    const marked = [...stats.values()].filter((s) =>
      running(s) &&
      environValue(c, s.pid, "CELLS_SCOPE")?.split(",").some((t) =>
        t === token || t.startsWith(`${token}.`)
      )
    ).map((s) => s.pid);
    return [...new Set([...marked, ...descendantsIn(stats, marked)])].filter((pid) =>
      pid !== Deno.pid && running(stats.get(pid))
    );
  };
  const stopped = new Set<number>();
  for (let round = 0; round < 100; round++) {
    const fresh = members().filter((pid) => !stopped.has(pid));
    if (!fresh.length) break;
    for (const pid of fresh) {
      sendSignal(c, pid, SIGNALS.SIGSTOP);
      stopped.add(pid);
    }
    pause(5);
  }
  for (const pid of stopped) sendSignal(c, pid, SIGNALS.SIGKILL);
}
