// The interleaving protocol of an append child and its parent. The child warms up, prints
// `ready`, then runs as many steps as each stdin line asks and answers with their time as
// `{"seconds": s}`, until `done`; then it prints its result. The parent gives each child
// of a round its turn in slices, so that the disk's drift hits them alike.
// `_python_worker.py` speaks the same protocol.
import { cpuUsage } from "node:process";
import { ROOT } from "./_config.ts";

/** The time of a `timed` run: wall and CPU (user + system, all threads), in seconds. */
export interface TimedRun {
  seconds: number;
  cpuSeconds: number;
}

/**
 * The child's side: runs `warmup` untimed steps, then times `n` more in the slices the
 * parent asks for. With `n` = 0 (a warm-up run) it returns after the warmup.
 */
export function timed(warmup: number, n: number, step: (i: number) => void): TimedRun {
  for (let i = 0; i < warmup; i++) step(i);
  if (n === 0) return { seconds: 0, cpuSeconds: 0 };
  const encoder = new TextEncoder();
  const say = (line: string) => Deno.stdout.writeSync(encoder.encode(line + "\n"));
  say("ready");
  let next = warmup;
  let seconds = 0;
  let cpuSeconds = 0;
  for (let line = readLineSync(); line !== "done"; line = readLineSync()) {
    const count = Number(line);
    if (!Number.isInteger(count) || count <= 0) throw new Error(`bad slice request: ${line}`);
    const cpu = cpuUsage();
    const started = performance.now();
    for (const end = next + count; next < end; next++) step(next);
    const s = (performance.now() - started) / 1000;
    const used = cpuUsage(cpu);
    seconds += s;
    cpuSeconds += (used.user + used.system) / 1e6;
    say(JSON.stringify({ seconds: s }));
  }
  if (next !== warmup + n) throw new Error(`ran ${next - warmup} of ${n} steps`);
  return { seconds, cpuSeconds };
}

/** One line from stdin, without its newline (the parent's slice requests are short). */
function readLineSync(): string {
  const byte = new Uint8Array(1);
  let line = "";
  for (;;) {
    const n = Deno.stdin.readSync(byte);
    if (n === null) throw new Error("stdin closed before done");
    if (n === 0) continue;
    if (byte[0] === 10) return line;
    line += String.fromCharCode(byte[0]!);
  }
}

/** How long an interleaved child may take to answer one request before the bench fails. */
const LIVE_REPLY_MS = 300_000;

/**
 * The parent's side: an append child run in slices. It warms up, says `ready`, then
 * runs what it is asked, a slice at a time, so that the parent can interleave the
 * implementations finely.
 */
export class LiveChild {
  /** The child's name in messages (its variant). */
  readonly name: string;
  #child: Deno.ChildProcess;
  #lines: AsyncIterator<string>;
  #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #stderr: Promise<string>;

  /** Starts `cmd args` in the project root with exactly `env`. */
  constructor(name: string, cmd: string, args: string[], env: Record<string, string>) {
    this.name = name;
    this.#child = new Deno.Command(cmd, {
      args,
      cwd: ROOT,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#lines = readLines(this.#child.stdout);
    this.#stdin = this.#child.stdin.getWriter();
    this.#stderr = new Response(this.#child.stderr).text();
  }

  /** Waits for the warmup to end. */
  async ready(): Promise<void> {
    const line = await this.#next("ready");
    if (line !== "ready") throw new Error(`${this.name}: expected ready, got: ${line}`);
  }

  /** Runs `count` more steps; returns their wall time in seconds. */
  async slice(count: number): Promise<number> {
    await this.#stdin.write(new TextEncoder().encode(`${count}\n`));
    const line = await this.#next(`a slice of ${count}`);
    const seconds = (JSON.parse(line) as { seconds?: unknown }).seconds;
    if (typeof seconds !== "number") throw new Error(`${this.name}: bad slice answer: ${line}`);
    return seconds;
  }

  /** Ends the run; returns the child's result (its last line). */
  async finish(): Promise<unknown> {
    await this.#stdin.write(new TextEncoder().encode("done\n"));
    await this.#stdin.close();
    const line = await this.#next("its result");
    const status = await this.#child.status;
    if (!status.success) {
      throw new Error(`${this.name} failed (exit ${status.code}): ${await this.#stderr}`);
    }
    return JSON.parse(line);
  }

  /** Kills the child if it still runs (after a failure). */
  kill(): void {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // already exited
    }
  }

  async #next(what: string): Promise<string> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.name}: no answer within ${LIVE_REPLY_MS} ms for ${what}`)),
        LIVE_REPLY_MS,
      );
    });
    try {
      const next = await Promise.race([this.#lines.next(), deadline]);
      if (next.done) {
        this.kill();
        throw new Error(`${this.name} ended before ${what}: ${(await this.#stderr).trim()}`);
      }
      return next.value;
    } finally {
      clearTimeout(timer);
    }
  }
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    rest += chunk;
    for (let at = rest.indexOf("\n"); at >= 0; at = rest.indexOf("\n")) {
      yield rest.slice(0, at);
      rest = rest.slice(at + 1);
    }
  }
  if (rest) yield rest;
}

/** `n` split into `slices` parts that differ by at most one, never an empty one. */
export function sliceSizes(n: number, slices: number): number[] {
  const k = Math.max(1, Math.min(slices, n));
  return Array.from({ length: k }, (_, i) => Math.floor(n / k) + (i < n % k ? 1 : 0));
}
