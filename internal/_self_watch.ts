// A judge's process that no parent watches bounds its own judgings: a worker thread runs
// while the main thread is blocked (a store waiting in `Atomics.wait` or on a lock through a
// synchronous call), so it can write why to stderr and kill the process once one judging
// has run past its deadline. It is unreferenced: it never keeps the process alive.

const WORKER = `
const { parentPort } = require("node:worker_threads");
const timers = new Map();
parentPort.on("message", (m) => {
  if (m.end !== undefined) {
    clearTimeout(timers.get(m.end));
    timers.delete(m.end);
    return;
  }
  timers.set(m.id, setTimeout(() => {
    const message = "The store never returned while " + m.what + " (judged in this process, " +
      "which no other process watches): still running after " + m.seconds + " s, the process " +
      "is killed; a store must open and read what a crash left" +
      (m.folder ? "; the run folder is kept: " + m.folder : "");
    try { Deno.stderr.writeSync(new TextEncoder().encode(message + "\\n")); } catch {}
    try { Deno.kill(Deno.pid, "SIGKILL"); } catch {}
  }, m.ms));
});
`;

/** A judging the watcher bounds. */
export interface WatchedJudging {
  /** What is judged, for the message. */
  what: string;
  /** The run folder kept, for the message. */
  folder?: string | undefined;
  /** The judging deadline the message names, in seconds. */
  seconds: number;
  /** When the process is killed, in milliseconds from now. */
  ms: number;
}

/** The watcher of this process's judgings. */
export interface SelfWatch {
  /** A judging began: past its time, it is named on stderr and the process is killed. */
  enter(id: number, judging: WatchedJudging): void;
  /** The judging ended in time. */
  leave(id: number): void;
}

/**
 * Starts the watcher thread, or `undefined` where none can run (no worker threads).
 *
 * @returns The watcher.
 */
export async function startSelfWatch(): Promise<SelfWatch | undefined> {
  try {
    const { Worker } = await import("node:worker_threads");
    const worker = new Worker(WORKER, { eval: true });
    worker.unref();
    return {
      enter: (id, judging) => worker.postMessage({ id, ...judging }),
      leave: (id) => worker.postMessage({ end: id }),
    };
  } catch {
    return undefined;
  }
}
