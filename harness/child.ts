import { dirname, fromFileUrl } from "../internal/path.ts";
import { drainPipe, settleDrains } from "../internal/child_output.ts";
import { type ChildPermissions, scopedPermissions } from "./permissions.ts";
import {
  prepareTree,
  type ProcessTree,
  type Survivor,
  survivorsMessage,
  TREE_ENV,
} from "./process_tree.ts";

/**
 * Exit code of a claimant that won.
 *
 * @example
 * ```ts
 * import { classifyExit, WON } from "./child.ts";
 * console.log(classifyExit({ success: true, code: WON, signal: null }).kind); // "won"
 * ```
 */
export const WON = 0;
/**
 * Exit code of a claimant that lost cleanly.
 *
 * @example
 * ```ts
 * import { LOST, WON } from "./child.ts";
 * import { SessionDB } from "../session_db/session_db.ts";
 * const [path = "store.db", sessionId = "s1"] = Deno.args; // a claimant child
 * const db = SessionDB.open(path);
 * Deno.exit(db.claimHandoff(sessionId) ? WON : LOST);
 * ```
 */
export const LOST = 10;
/**
 * Exit code of a child that gave up waiting (a barrier or its own deadline).
 *
 * @example
 * ```ts
 * import { awaitBarrier } from "./barrier.ts";
 * import { TIMED_OUT } from "./child.ts";
 * const [barrier = "go"] = Deno.args; // a child waiting for its release
 * if (!awaitBarrier(barrier, 60_000)) Deno.exit(TIMED_OUT);
 * ```
 */
export const TIMED_OUT = 3;

/**
 * How a child ended.
 *
 * @example
 * ```ts
 * import { classifyExit, type ExitKind } from "./child.ts";
 * const kind: ExitKind = classifyExit({ success: false, code: 137, signal: "SIGKILL" }).kind;
 * console.log(kind); // "killed"
 * ```
 */
export type ExitKind = "won" | "lost" | "killed" | "crash";

/**
 * The classified end of a child.
 *
 * @example
 * ```ts
 * import { classifyExit, type ExitClass } from "./child.ts";
 * const exit: ExitClass = classifyExit({ success: false, code: 1, signal: null });
 * if (exit.kind === "crash") console.error(`The child crashed with code ${exit.code}`);
 * ```
 */
export interface ExitClass {
  /** `won` (0), `lost` (10), `killed` (SIGKILL), or `crash` (anything else). */
  kind: ExitKind;
  /** The exit code. */
  code: number;
  /** The signal that ended it, or `null`. */
  signal: Deno.Signal | null;
}

/**
 * Classifies an exit status: 0 won, 10 lost, SIGKILL killed, and every other code or
 * signal a crash, so a crashing child can never pass as a clean loser.
 *
 * @param status The child's status.
 * @returns The classification.
 * @example
 * ```ts
 * import { classifyExit } from "./child.ts";
 * console.log(classifyExit({ success: false, code: 1, signal: null }).kind); // "crash"
 * ```
 */
export function classifyExit(status: Deno.CommandStatus): ExitClass {
  const { code, signal } = status;
  if (signal === "SIGKILL") return { kind: "killed", code, signal };
  if (signal === null && code === WON) return { kind: "won", code, signal };
  if (signal === null && code === LOST) return { kind: "lost", code, signal };
  return { kind: "crash", code, signal };
}

/**
 * Options of {@linkcode spawnChild}.
 *
 * @example
 * ```ts
 * import { spawnChild, type SpawnOptions } from "./child.ts";
 * import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
 * const options: SpawnOptions = {
 *   script: new URL("data:application/typescript,console.log(Deno.env.get('RUN'))"),
 *   runDir: Deno.makeTempDirSync(),
 *   library: sqliteLibraryPath(),
 *   env: { RUN: "1" }, // also added to the child's --allow-env list
 * };
 * const child = spawnChild(options);
 * console.log((await child.status).code, child.stdout.trim()); // 0 "1"
 * ```
 */
export interface SpawnOptions {
  /** The child's script (a file path or a `file:`/`http(s):` URL). */
  script: string | URL;
  /** Arguments after the script. */
  args?: string[];
  /** The only directory the child may write, and its working directory. */
  runDir: string;
  /** The SQLite library the child may load (its `--allow-ffi` scope and `DENO_SQLITE_PATH`). */
  library: string;
  /** Extra environment; names become the child's `--allow-env` list. */
  env?: Record<string, string>;
  /** Extra paths the child may read (module folders beyond the script's package). */
  read?: string[];
  /**
   * Hosts the child may import modules from (`--allow-import`), in addition to Deno's
   * default import hosts, which an explicit list would otherwise replace.
   */
  importHosts?: string[];
  /**
   * The `deno.json` whose import map the child's modules need (a target's project);
   * default: none (`--no-config`).
   */
  config?: string;
  /**
   * Extra permissions the target declared for its children (`childPermissions`), granted
   * on top of the scope: its variables (their values pass through from this process when
   * set), sys APIs, native libraries, read paths and named programs. Never net or write.
   */
  permissions?: ChildPermissions;
  /** Most bytes of stdout and of stderr kept (the tail); default 64 KiB. */
  outputLimit?: number;
}

/**
 * The environment names every child may read.
 *
 * @example
 * ```ts
 * import { CHILD_ENV } from "./child.ts";
 * console.log(CHILD_ENV.includes("SESSION_DB_CRASH_AT")); // true: every child may read it
 * ```
 */
export const CHILD_ENV = [
  "DENO_SQLITE_PATH",
  "SESSION_DB_JOURNAL_MODE",
  "SESSION_DB_CRASH_AT",
] as const;

/**
 * The hosts Deno allows imports from by default (`--allow-import` with no list).
 *
 * @example
 * ```ts
 * import { DEFAULT_IMPORT_HOSTS } from "./child.ts";
 * const flag = `--allow-import=${[...DEFAULT_IMPORT_HOSTS, "example.com:443"].join(",")}`;
 * console.log(flag.startsWith("--allow-import=deno.land:443,")); // true
 * ```
 */
export const DEFAULT_IMPORT_HOSTS: readonly string[] = [
  "deno.land:443",
  "jsr.io:443",
  "esm.sh:443",
  "cdn.jsdelivr.net:443",
  "raw.githubusercontent.com:443",
  "gist.githubusercontent.com:443",
];

/**
 * The root of this package when it is loaded from files, else `undefined`.
 *
 * @example
 * ```ts
 * import { packageRoot } from "./child.ts";
 * const root = packageRoot(); // e.g. "/work/main/"
 * if (root) console.log(`${root}cells/reference_target.ts`);
 * ```
 */
export function packageRoot(): string | undefined {
  const url = new URL("../", import.meta.url);
  return url.protocol === "file:" ? fromFileUrl(url) : undefined;
}

class Tail {
  #chunks: Uint8Array[] = [];
  #size = 0;
  total = 0;
  constructor(readonly limit: number) {}
  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#size > this.limit && this.#chunks.length > 1) {
      this.#size -= this.#chunks.shift()!.length;
    }
  }
  text(): string {
    const all = new Uint8Array(this.#size);
    let offset = 0;
    for (const chunk of this.#chunks) {
      all.set(chunk, offset);
      offset += chunk.length;
    }
    const text = new TextDecoder().decode(all.subarray(Math.max(0, all.length - this.limit)));
    return this.total > this.limit ? `[${this.total - this.limit} bytes cut]…${text}` : text;
  }
}

const live = new Set<Child>();

/**
 * A running child process with its output kept (bounded) and its status awaited.
 *
 * @example
 * ```ts
 * import { spawnChild } from "./child.ts";
 * // const child = spawnChild({ script, runDir, library });
 * // await child.status;
 * ```
 */
export class Child {
  #process: Deno.ChildProcess;
  #stdout: Tail;
  #stderr: Tail;
  #status: Promise<Deno.CommandStatus>;
  #exited: Deno.CommandStatus | undefined;
  /** The command line, for messages and evidence. */
  readonly commandLine: string[];
  /**
   * The child's whole process tree (it and everything it started), which its kills,
   * stops and continues take; `undefined` where trees cannot be kept (not Linux).
   */
  readonly tree: ProcessTree | undefined;

  /** @internal Use {@linkcode spawnChild}. */
  constructor(
    process: Deno.ChildProcess,
    commandLine: string[],
    limit: number,
    tree?: ProcessTree,
  ) {
    this.#process = process;
    this.commandLine = commandLine;
    this.tree = tree;
    this.#stdout = new Tail(limit);
    this.#stderr = new Tail(limit);
    const drains = [
      drainPipe(process.stdout, (chunk) => this.#stdout.push(chunk)),
      drainPipe(process.stderr, (chunk) => this.#stderr.push(chunk)),
    ];
    this.#status = process.status.then(async (status) => {
      // A crash takes the child's tree, as the harness's own kills do: a helper the store
      // started would otherwise outlive it, holding its pipes (and writing to its files).
      if (status.signal) tree?.kill();
      await settleDrains(drains);
      this.#exited = status;
      live.delete(this);
      return status;
    });
    live.add(this);
  }

  /** The child's pid. */
  get pid(): number {
    return this.#process.pid;
  }

  /** Resolves when the child has exited and its output is drained. */
  get status(): Promise<Deno.CommandStatus> {
    return this.#status;
  }

  /** The exit status once known, else `undefined`. */
  get exited(): Deno.CommandStatus | undefined {
    return this.#exited;
  }

  /** The tail of what the child wrote to stderr. */
  get stderr(): string {
    return this.#stderr.text();
  }

  /** The tail of what the child wrote to stdout. */
  get stdout(): string {
    return this.#stdout.text();
  }

  /**
   * Sends a signal. SIGKILL, SIGSTOP and SIGCONT take the child's whole tree: SIGKILL
   * freezes the tree, then kills every process in it (also after the child itself
   * exited: what it started may still run); SIGSTOP returns once every process of it is
   * stopped. Any other signal goes to the child alone, while it runs.
   */
  signal(signal: Deno.Signal = "SIGKILL"): void {
    const tree = this.tree;
    if (tree && signal === "SIGKILL") tree.kill();
    if (this.#exited) return;
    if (tree && signal === "SIGSTOP") return tree.stop();
    if (tree && signal === "SIGCONT") return tree.resume();
    try {
      this.#process.kill(signal);
    } catch {
      // Already gone: the status promise reports how it ended.
    }
  }

  /**
   * A description: pid, exit, and the stderr tail, led on the first line by the line that
   * says most (a reader of one line, a report's table, sees why the child died).
   */
  describe(): string {
    const status = this.#exited;
    const end = status
      ? `exited with code ${status.code}${status.signal ? ` (signal ${status.signal})` : ""}`
      : "still running";
    const stderr = this.stderr.trim();
    if (!stderr) return `child pid ${this.pid} ${end}; stderr: (empty)`;
    const lines = stderr.split("\n");
    const lead = lines.find((line) => line.startsWith("error:")) ?? lines.at(-1)!;
    return `child pid ${this.pid} ${end}; stderr: ${lead}${lines.length > 1 ? `\n${stderr}` : ""}`;
  }
}

/**
 * Children spawned and not yet reaped in this process (used to prove that no child
 * outlives the test that spawned it).
 *
 * @returns The live children.
 * @example
 * ```ts
 * import { liveChildren, reapAll } from "./child.ts";
 * // After a test: nothing it spawned may still run.
 * if (liveChildren().length > 0) await reapAll();
 * console.log(liveChildren().length); // 0
 * ```
 */
export function liveChildren(): Child[] {
  return [...live];
}

/**
 * Kills (SIGKILL) the whole tree of each child, reaps the children, and waits (bounded)
 * until nothing of their trees is left; for `finally` blocks. A process of a tree still
 * there after that is a survivor: it is killed again and returned.
 *
 * @param children The children to end; default every live one.
 * @returns The survivors (empty when every tree is gone).
 * @example
 * ```ts
 * import { reapAll, spawnChild } from "./child.ts";
 * import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
 * const script = new URL("data:application/typescript,setInterval(()=>{},1000)");
 * const runDir = Deno.makeTempDirSync();
 * const child = spawnChild({ script, runDir, library: sqliteLibraryPath() });
 * try {
 *   console.log(child.pid); // … drive the child …
 * } finally {
 *   await reapAll([child]);
 * }
 * ```
 */
export async function reapAll(children: Iterable<Child> = live): Promise<Survivor[]> {
  const all = [...children];
  for (const child of all) child.signal("SIGKILL");
  await Promise.all(all.map((child) => child.status));
  const left = await Promise.all(all.map((child) => child.tree?.settle() ?? []));
  return left.flat();
}

/**
 * {@linkcode reapAll}, then fails naming every survivor: after a cell, nothing its
 * children started may still run.
 *
 * @param children The children whose trees must be gone.
 * @param where What is over, for the message (e.g. `cell 1 prefix durability`).
 * @throws {Error} Naming each survivor's pid and command line (they are killed).
 * @example
 * ```ts
 * import { reapWithoutSurvivors, spawnChild } from "./child.ts";
 * import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
 * const script = new URL("data:application/typescript,setInterval(()=>{},1000)");
 * const child = spawnChild({ script, runDir: Deno.makeTempDirSync(), library: sqliteLibraryPath() });
 * await reapWithoutSurvivors([child], "the example"); // kills the tree; nothing survives
 * ```
 */
export async function reapWithoutSurvivors(
  children: Iterable<Child>,
  where: string,
): Promise<void> {
  const left = await reapAll(children);
  if (left.length) throw new Error(survivorsMessage(left, where));
}

/**
 * Spawns `deno run` on a script with the narrowest permissions that work: read and
 * write its run directory, read the package's module files, `--allow-ffi` only the
 * SQLite library (and libc, for its guard), `--allow-env` a list, no run, no net, a
 * cleared environment; plus exactly the extra `permissions` a target declared, when
 * given. The child is the root of a process tree of its own (`child.tree`, see
 * `process_tree.ts`): a guard preloaded before the script makes it die with this process
 * and keeps what it starts findable, so that its kills take the whole tree.
 *
 * @param options Script, arguments, run directory, library, environment.
 * @returns The running child.
 * @example
 * ```ts
 * import { spawnChild } from "./child.ts";
 * const runDir = Deno.makeTempDirSync();
 * const script = new URL("data:application/typescript,Deno.exit(10)");
 * const child = spawnChild({ script, runDir, library: "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" });
 * console.log((await child.status).code); // 10
 * ```
 */
export function spawnChild(options: SpawnOptions): Child {
  const script = options.script instanceof URL ? options.script.href : options.script;
  const extra = options.permissions ?? {};
  const read = [options.runDir, ...(options.read ?? []), ...(extra.read ?? [])];
  const root = packageRoot();
  if (root) read.push(root);
  if (script.startsWith("file:")) read.push(dirname(fromFileUrl(script)));
  const tree = prepareTree();
  const env: Record<string, string> = {
    DENO_SQLITE_PATH: options.library,
    NO_COLOR: "1",
    ...options.env,
    ...tree.env,
  };
  for (const name of ["DENO_DIR", "HOME", "PATH", ...(extra.env ?? [])]) {
    const value = Deno.env.get(name);
    if (value !== undefined && env[name] === undefined) env[name] = value;
  }
  const allowEnv = [
    ...new Set([
      ...CHILD_ENV,
      ...Object.keys(options.env ?? {}),
      ...(extra.env ?? []),
      ...(tree.env[TREE_ENV] ? [TREE_ENV] : []),
    ]),
  ];
  const flags = [
    "run",
    options.config ? `--config=${options.config}` : "--no-config",
    "--no-lock",
    ...scopedPermissions({
      read,
      write: options.runDir,
      ffi: [options.library, ...(extra.ffi ?? []), ...tree.ffi],
      env: allowEnv,
      ...(extra.sys ? { sys: extra.sys } : {}),
      ...(extra.run?.length ? { run: extra.run, preloaded: env.LD_PRELOAD !== undefined } : {}),
      ...(extra.signals ? { signals: true } : {}),
    }),
  ];
  if (tree.preload) flags.push(`--preload=${tree.preload}`);
  if (options.importHosts?.length) {
    const hosts = new Set([...DEFAULT_IMPORT_HOSTS, ...options.importHosts]);
    flags.push(`--allow-import=${[...hosts].join(",")}`);
  }
  const args = [...flags, script, ...(options.args ?? [])];
  const process = new Deno.Command(Deno.execPath(), {
    args,
    cwd: options.runDir,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return new Child(
    process,
    [Deno.execPath(), ...args],
    options.outputLimit ?? 64 * 1024,
    tree.adopt(process.pid),
  );
}

/**
 * Raised when a child was not alive at kill time or did not die of SIGKILL.
 *
 * @example
 * ```ts
 * import { KillError, killWhileAlive, spawnChild } from "./child.ts";
 * import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
 * const script = new URL("data:application/typescript,Deno.exit(0)");
 * const runDir = Deno.makeTempDirSync();
 * const child = spawnChild({ script, runDir, library: sqliteLibraryPath() });
 * await child.status; // it exited on its own: too late to kill
 * await killWhileAlive(child).catch((error) => console.log(error instanceof KillError)); // true
 * ```
 */
export class KillError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "KillError";
  }
}

/**
 * Asserts the child is alive, sends SIGKILL, reaps it, and checks that SIGKILL is
 * what ended it: a child that had already exited fails with its stderr.
 *
 * @param child The child.
 * @returns The milliseconds from the call to the reaped status.
 * @throws {KillError} When the child was not alive or did not die of SIGKILL.
 * @example
 * ```ts
 * import { killWhileAlive, spawnChild } from "./child.ts";
 * import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
 * const script = new URL("data:application/typescript,setInterval(()=>{},1000)");
 * const runDir = Deno.makeTempDirSync();
 * const child = spawnChild({ script, runDir, library: sqliteLibraryPath() });
 * console.log(`reaped ${await killWhileAlive(child)} ms after the SIGKILL`);
 * ```
 */
export async function killWhileAlive(child: Child): Promise<number> {
  if (child.exited) {
    throw new KillError(
      `Cannot kill the child: it was not alive at kill time: ${child.describe()}`,
    );
  }
  const started = performance.now();
  child.signal("SIGKILL");
  const status = await child.status;
  if (status.signal !== "SIGKILL") {
    throw new KillError(
      `Cannot kill the child: it exited on its own before SIGKILL landed: ${child.describe()}`,
    );
  }
  return performance.now() - started;
}
