/**
 * A child's end and output, as `Deno.ChildProcess.output()` gives them, without waiting on
 * a pipe that a process the child started still holds: such a process inherited the
 * child's stdout and stderr (`Deno.Command`'s default for `spawn`), and a store's helper
 * left running by a crash keeps them open for as long as it runs. Once the child itself
 * ended, its pipes get a short grace to close; then what they gave so far is its output.
 *
 * @example
 * ```ts
 * import { childOutput } from "./child_output.ts";
 * const child = new Deno.Command("sh", {
 *   args: ["-c", "echo hi; sleep 30 &"],
 *   stdout: "piped",
 *   stderr: "piped",
 * }).spawn();
 * const output = await childOutput(child, { graceMs: 100 });
 * console.log(new TextDecoder().decode(output.stdout), output.held); // "hi\n" true
 * ```
 *
 * @module
 */

/** After a child ended, how long its pipes may stay open before they are let go. */
export const PIPE_GRACE_MS = 2_000;

/** A pipe read to its end as it fills, that can be let go. */
export interface PipeDrain {
  /** Resolves when the pipe closed (or was let go). */
  done: Promise<void>;
  /** Stops reading and closes this end of the pipe. */
  release(): Promise<void>;
}

/**
 * Reads `stream` to its end, handing each chunk to `push` as it comes.
 *
 * @param stream A child's stdout or stderr.
 * @param push Takes each chunk.
 * @returns The drain.
 */
export function drainPipe(
  stream: ReadableStream<Uint8Array>,
  push: (chunk: Uint8Array) => void,
): PipeDrain {
  const reader = stream.getReader();
  const done = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      push(value);
    }
  })().catch(() => {});
  return {
    done,
    release: async () => {
      await reader.cancel().catch(() => {});
      await done;
    },
  };
}

/**
 * Waits until every drain ended, at most `graceMs`; the ones still open then are let go.
 *
 * @param drains The child's drains (started when it was spawned).
 * @param graceMs How long they may stay open.
 * @returns Whether some pipe was still held open at the grace's end.
 */
export async function settleDrains(
  drains: readonly PipeDrain[],
  graceMs: number = PIPE_GRACE_MS,
): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = await Promise.race([
    Promise.all(drains.map((d) => d.done)).then(() => true),
    new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(false), graceMs)),
  ]);
  clearTimeout(timer);
  if (!ended) await Promise.all(drains.map((d) => d.release()));
  return !ended;
}

/** A child's end: its status, what it printed, and whether a pipe was still held. */
export interface ChildOutput extends Deno.CommandOutput {
  /**
   * Whether a pipe was still open when the grace ended (a process the child started held
   * it): the output is what came before.
   */
  held: boolean;
}

/** How {@linkcode childOutput} waits. */
export interface ChildOutputOptions {
  /**
   * Runs as soon as the child exited, before its pipes are waited for (a caller kills the
   * child's process tree there, say, after a crash).
   */
  onExit?: (status: Deno.CommandStatus) => void;
  /** How long the pipes may stay open after the exit (default {@linkcode PIPE_GRACE_MS}). */
  graceMs?: number;
}

/**
 * Awaits `child` as its `output()` would, its pipes bounded by a grace after its exit.
 * Start it right after the spawn: the pipes are read from the call on.
 *
 * @param child A child whose stdout and stderr are piped or null.
 * @param options What to do at the exit, and the grace.
 * @returns Its end.
 */
export async function childOutput(
  child: Deno.ChildProcess,
  options: ChildOutputOptions = {},
): Promise<ChildOutput> {
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  const drains: PipeDrain[] = [];
  for (const [pick, into] of [[() => child.stdout, out], [() => child.stderr, err]] as const) {
    let stream: ReadableStream<Uint8Array> | undefined;
    try {
      stream = pick();
    } catch {
      // Not piped.
    }
    if (stream) drains.push(drainPipe(stream, (chunk) => into.push(chunk)));
  }
  const status = await child.status;
  options.onExit?.(status);
  const held = await settleDrains(drains, options.graceMs);
  return { ...status, stdout: joined(out), stderr: joined(err), held };
}

function joined(chunks: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.length;
  }
  return all;
}
