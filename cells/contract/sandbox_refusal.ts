/**
 * A permission the cells' children lack, met by the store: in a scoped child, a store call
 * that Deno refused (`NotCapable`) is the sandbox's doing, not the store's, so the child
 * records it and exits with {@linkcode SANDBOX_REFUSED_EXIT} instead of letting the cell
 * judge it as the store's error; the cell then ends in ERROR naming the permission and the
 * `childPermissions` declaration that grants it.
 *
 * @module
 */

/** The variable naming the file a scoped child records a refusal in (set by the spawner). */
export const SANDBOX_REFUSALS_ENV = "CELLS_SANDBOX_REFUSALS";

/** The exit code of a child whose store was refused a permission (`EX_NOPERM`). */
export const SANDBOX_REFUSED_EXIT = 77;

/**
 * The refusal file of a run folder, which the spawner names in each child's
 * {@linkcode SANDBOX_REFUSALS_ENV}.
 *
 * @param runDir The run's folder (the children's one writable folder).
 * @returns The file's path.
 * @example
 * ```ts
 * import { sandboxRefusalsFile } from "./sandbox_refusal.ts";
 * console.log(sandboxRefusalsFile("/tmp/run")); // "/tmp/run/sandbox-refusals.jsonl"
 * ```
 */
export function sandboxRefusalsFile(runDir: string): string {
  return `${runDir}/sandbox-refusals.jsonl`;
}

/** A permission refusal a store met in a scoped child. */
export interface SandboxRefusal {
  /** The child's pid. */
  pid: number;
  /** The store call refused (`openStore` or a method's name). */
  call: string;
  /** The refused error's name (`NotCapable`, or the store's own wrapping one). */
  name: string;
  /** Its message (Deno's `Requires … access` words). */
  message: string;
}

/**
 * Whether Deno's sandbox refused what was thrown: `NotCapable` in its cause chain, or Deno's
 * `Requires <kind> access` words (a refusal a store wrapped without its cause). An
 * operating system's `PermissionDenied` (a file's mode) is the store's business, not this.
 *
 * @param error What the store threw.
 * @returns Whether it is a sandbox refusal.
 * @example
 * ```ts
 * import { isSandboxRefusal } from "./sandbox_refusal.ts";
 * console.log(isSandboxRefusal(new Deno.errors.NotCapable("Requires run access"))); // true
 * console.log(isSandboxRefusal(new Deno.errors.PermissionDenied("EACCES"))); // false
 * ```
 */
export function isSandboxRefusal(error: unknown): boolean {
  for (let c: unknown = error, depth = 0; c instanceof Error && depth < 8; c = c.cause, depth++) {
    if (c.name === "NotCapable" || /\bRequires \w+ access\b/.test(c.message)) return true;
  }
  return false;
}

/** The refusal file this child records in, when its spawner asked for one. */
function refusalFile(): string | undefined {
  try {
    return Deno.env.get(SANDBOX_REFUSALS_ENV) || undefined;
  } catch {
    return undefined; // not in this child's variable list: not a scoped cell child
  }
}

/**
 * In a scoped child, a sandbox refusal ends the child: it is recorded in the spawner's
 * refusal file and the child exits with {@linkcode SANDBOX_REFUSED_EXIT}. Elsewhere (the
 * parent, a child with every permission) it returns and the caller throws as before.
 *
 * @param call The store call refused.
 * @param error What the store threw.
 * @example
 * ```ts
 * import { endIfRefused } from "./sandbox_refusal.ts";
 * endIfRefused("appendMessage", new Error("no such table")); // returns: not a refusal
 * ```
 */
export function endIfRefused(call: string, error: unknown): void {
  if (!isSandboxRefusal(error)) return;
  const file = refusalFile();
  if (!file) return;
  const e = error as Error;
  const refusal: SandboxRefusal = {
    pid: Deno.pid,
    call,
    name: e.name,
    message: e.message.split("\n")[0]!.slice(0, 400),
  };
  try {
    Deno.writeTextFileSync(file, `${JSON.stringify(refusal)}\n`, { append: true });
  } catch { /* the exit code still says it */ }
  console.error(`the store was refused a permission in ${call}: ${e.name}: ${refusal.message}`);
  Deno.exit(SANDBOX_REFUSED_EXIT);
}

/**
 * The refusals the children recorded in `file` (none when it is absent; a torn last line
 * is skipped).
 *
 * @param file The refusal file.
 * @returns The refusals, in the order recorded.
 * @example
 * ```ts
 * import { readSandboxRefusals } from "./sandbox_refusal.ts";
 * console.log(readSandboxRefusals(`${Deno.makeTempDirSync()}/none.jsonl`)); // []
 * ```
 */
export function readSandboxRefusals(file: string): SandboxRefusal[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(file);
  } catch {
    return [];
  }
  const refusals: SandboxRefusal[] = [];
  for (const line of text.split("\n")) {
    try {
      if (line.trim()) refusals.push(JSON.parse(line));
    } catch { /* a torn last line */ }
  }
  return refusals;
}

/**
 * The refusals recorded anywhere in a run folder, its subfolders included to `depth`
 * levels (a power-loss run, its second lives and a fault clause spawn their children in
 * folders of their own inside it).
 *
 * @param root The run folder.
 * @param depth How many folder levels below it to look in (default 4).
 * @returns The refusals.
 * @example
 * ```ts
 * import { findSandboxRefusals } from "./sandbox_refusal.ts";
 * console.log(findSandboxRefusals(Deno.makeTempDirSync())); // []
 * ```
 */
export function findSandboxRefusals(root: string, depth = 4): SandboxRefusal[] {
  const found = readSandboxRefusals(sandboxRefusalsFile(root));
  if (depth <= 0) return found;
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(root)];
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry.isDirectory) found.push(...findSandboxRefusals(`${root}/${entry.name}`, depth - 1));
  }
  return found;
}

/**
 * Why a run that met refusals judged nothing: the first refusal and the declaration that
 * grants it.
 *
 * @param refusals The refusals (at least one).
 * @returns The reason, for an ERROR.
 * @example
 * ```ts
 * import { refusalReason } from "./sandbox_refusal.ts";
 * const reason = refusalReason([{ pid: 7, call: "tryAcquireCompressionLock", name: "NotCapable", message: "Requires run access" }]);
 * console.log(reason.includes("signals: true")); // true
 * ```
 */
export function refusalReason(refusals: readonly SandboxRefusal[]): string {
  const first = refusals[0]!;
  const kind = /Requires (\w+) access/.exec(first.message)?.[1];
  const what =
    `The store was refused a permission the cells' children do not get, so nothing was judged: ` +
    `${first.call} threw ${first.name}: ${first.message} (${refusals.length} refusal(s))`;
  // Deno grants /proc/<pid> only with every permission, which no child gets.
  if (kind === "all") {
    return `${what}; no declaration grants every permission: ask the C library instead (a liveness check through kill(pid, 0) over FFI, as targets/_liveness.ts does, needs only ffi)`;
  }
  const fix = kind === "run"
    ? "signals: true when it signals other processes (Deno.kill, such as a lock holder's liveness check), or run: [<program>] when it starts one"
    : kind && ["env", "sys", "ffi", "read"].includes(kind)
    ? `${kind}: [...] naming what it needs`
    : "the permission it needs";
  return `${what}; declare it in the target's childPermissions export (${fix}; see cells/contract/target.ts)`;
}
