// Isolates of one process (deno test --parallel runs files so) setting up their run
// scope at the same moment; prints each one's tree settings and the process's cgroup.
const COUNT = Number(Deno.args[0] ?? "6");
const buffer = new SharedArrayBuffer(8);
const start = new Int32Array(buffer);
const workers = Array.from(
  { length: COUNT },
  () => new Worker(new URL("./isolate_worker.ts", import.meta.url).href, { type: "module" }),
);
const results = workers.map((worker) =>
  new Promise<unknown>((resolve) => worker.onmessage = (event) => resolve(event.data))
);
for (const worker of workers) worker.postMessage(buffer);
const end = performance.now() + 10_000;
while (Atomics.load(start, 1) < COUNT && performance.now() < end) {
  await new Promise((resolve) => setTimeout(resolve, 1));
}
Atomics.store(start, 0, 1);
Atomics.notify(start, 0);
const trees = await Promise.all(results);
const cgroup = Deno.readTextFileSync("/proc/self/cgroup").split("\n")
  .find((line) => line.startsWith("0::"))?.slice(3);
console.log(JSON.stringify({ trees, cgroup }));
