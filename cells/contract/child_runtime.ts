// Shared by the cells' child scripts: open the target's store, bound the child's life.
import { openTargetStore, type Store } from "./target.ts";
import { TIMED_OUT } from "../../harness/child.ts";
import { AckWriter } from "../../harness/ack_journal.ts";
import { awaitBarrier, signalReady } from "../../harness/barrier.ts";
import { endIfRefused } from "./sandbox_refusal.ts";
import { openRetriedWhileBusy } from "./busy_retried.ts";

// What the store's own background work (a timer, a promise nobody awaits) has Deno refuse
// is the sandbox's doing too: it ends the child as a refused call does. Anything else
// keeps Deno's own handling of an uncaught error.
addEventListener("error", (event) => endIfRefused("the store's background work", event.error));
addEventListener(
  "unhandledrejection",
  (event) => endIfRefused("the store's background work", event.reason),
);

/**
 * A child gives up on its own after this long: past a cell's overall deadline (10 minutes),
 * since a wait for a slow store that keeps acknowledging lasts up to ten of its deadlines,
 * and the parent, not the child, decides when it is over. A child whose parent died is
 * killed at once (the harness's child guard); this is the backstop.
 */
export const CHILD_LIFETIME_MS = 11 * 60_000;

/** Set once the child waits for its parent's SIGKILL: its script ends, its process must not. */
let awaitingKill = false;

/** How a child meets the contract's busy refusal (an error named `BusyDeadlineError`). */
export interface ChildStoreOptions {
  /**
   * `retried` (the default): the open and every call refused as busy are made again, for up
   * to a minute, as an application would (the refusal changed nothing). `thrown`: the
   * refusal reaches the child, for the children that judge it (cell 6, the races and stops,
   * the fault tier).
   */
  busy?: "retried" | "thrown";
}

/** Opens the store named by the target specifier. */
export async function openStoreFor(
  target: string,
  path: string,
  options: ChildStoreOptions = {},
): Promise<Store> {
  if (options.busy === "thrown") return await openTargetStore(target, path);
  return await openRetriedWhileBusy(target, path);
}

/** Exits with TIMED_OUT once the child has outlived `CHILD_LIFETIME_MS`. */
export function lifetimeGuard(): () => void {
  const end = performance.now() + CHILD_LIFETIME_MS;
  return () => {
    if (performance.now() > end) {
      console.error(`child ${Deno.pid}: lifetime of ${CHILD_LIFETIME_MS} ms passed; exiting`);
      Deno.exit(TIMED_OUT);
    }
  };
}

/**
 * Says the child got where it should be killed (creates `readyPath`) and waits for the
 * parent's SIGKILL, holding what it has open; the lifetime guard ends it if none comes.
 */
export function waitToBeKilled(readyPath: string): void {
  awaitingKill = true;
  Deno.writeTextFileSync(readyPath, "ready");
  setInterval(lifetimeGuard(), 1000);
}

/** Where a racing child waits to be released with the others, and who it is in messages. */
export interface Release {
  /** The run folder its ready file goes to. */
  runDir: string;
  /** Its name (its ready file's). */
  name: string;
  /** The barrier file. */
  barrier: string;
  /** Who it is in the timeout message, e.g. `claimant c0`. */
  who: string;
}

/**
 * Signals this child ready and waits for the barrier, longer than the parent waits for
 * every child to be ready (a slow start of the others never times this one out first);
 * exits with TIMED_OUT when it is never released.
 *
 * @param release Its run folder, name, barrier, and who it is in messages.
 * @example
 * ```ts ignore
 * import { awaitRelease } from "./child_runtime.ts";
 * awaitRelease({ runDir, name: "c0", barrier: `${runDir}/go`, who: "claimant c0" });
 * ```
 */
export function awaitRelease(release: Release): void {
  signalReady(release.runDir, release.name);
  if (!awaitBarrier(release.barrier, CHILD_LIFETIME_MS)) {
    console.error(
      `${release.who}: the barrier was not released within ${CHILD_LIFETIME_MS} ms`,
    );
    Deno.exit(TIMED_OUT);
  }
}

/**
 * The command-line arguments, checked for count. From here on the child ends when its
 * script has run to its end (unless it waits to be killed), whatever the store left
 * running (a timer it never cleared, a worker): a process the store keeps alive after its
 * work is no persistence failure, and the parent waits for the child's end.
 */
export function childArgs(count: number, usage: string): string[] {
  if (Deno.args.length < count) {
    console.error(`usage: ${usage}`);
    Deno.exit(2);
  }
  globalThis.addEventListener("load", () => {
    if (!awaitingKill) Deno.exit();
  });
  return Deno.args;
}

/**
 * Brackets an operation with two marks when the cell walks its calls (`CELLS_OP_MARKS`
 * names the marks file, watched by the recorder): a no-op otherwise.
 */
export async function marked<T>(op: string, run: () => Promise<T> | T): Promise<T> {
  marks ??= openMarks();
  marks?.write({ op, at: "start" });
  const result = await run();
  marks?.write({ op, at: "end" });
  return result;
}

let marks: AckWriter | null | undefined;
function openMarks(): AckWriter | null {
  let path: string | undefined;
  try {
    path = Deno.env.get("CELLS_OP_MARKS");
  } catch {
    return null; // not allowed to read it: not asked for
  }
  return path ? new AckWriter(path) : null;
}
