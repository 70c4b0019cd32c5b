// The power-loss tool's bench child: appends `n` messages through the target's store, one
// transaction each, and prints {"n", "ms", "cpuMicros"}. Run with or without the LD_PRELOAD
// recorder, everything else equal.
import { cpuUsage } from "node:process";
import { openTargetStore } from "../../cells/contract/target.ts";

const [target, dbPath, count] = Deno.args;
if (!target || !dbPath || !count) {
  console.error("usage: _powerloss_bench.ts <target> <db> <appends>");
  Deno.exit(2);
}
const n = Number(count);
const store = await openTargetStore(target, dbPath);
await store.createSession("bench");
const cpu = cpuUsage();
const started = performance.now();
for (let i = 0; i < n; i++) await store.appendMessage("bench", { role: "user", content: `m${i}` });
const ms = performance.now() - started;
const used = cpuUsage(cpu);
await store.close();
// CPU time is what recording adds; wall time also carries the disk's fsync latency.
console.log(JSON.stringify({ n, ms, cpuMicros: used.user + used.system }));
