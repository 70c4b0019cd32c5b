/**
 * The leg probe as a library function: a target's store opened in a child on a leg, with
 * the cells' scoped permissions, written to, and SIGKILLed while it holds the store open.
 * From what the child did and left it tells what the store really runs on
 * ({@linkcode StoreEngine}, read from evidence, never from the leg's settings), its
 * methods, the journal mode it ran in, and why it could not open when it could not (its
 * own error first).
 *
 * @example
 * ```ts
 * import { probeStore } from "./probe_store.ts";
 * const probe = await probeStore(new URL("../reference_target.ts", import.meta.url));
 * console.log(probe.engine.kind, probe.onDisk); // binding wal (or delete on a WAL-reset-vulnerable SQLite)
 * ```
 *
 * @module
 */
import { type Child, killWhileAlive, reapAll, spawnChild } from "../../harness/child.ts";
import { RunDir } from "../../harness/evidence.ts";
import { hasDatabaseHeader } from "../../internal/sqlite_files.ts";
import {
  currentLeg,
  type Leg,
  legEnv,
  legVerdict,
  observeJournalMode,
} from "../../harness/legs.ts";
import type { ChildPermissions } from "../../harness/permissions.ts";
import { exists, readPrefix } from "../../internal/fs.ts";
import type { StoreEngine } from "./report.ts";
import { targetSpecifier } from "../contract/load_target.ts";
import { declaredPermissions, targetAccess } from "../contract/target_access.ts";
import { PROBE_THREW, type ProbeLine, type ProbeStage } from "./_probe_line.ts";
import {
  readSandboxRefusals,
  refusalReason,
  SANDBOX_REFUSALS_ENV,
  sandboxRefusalsFile,
} from "../contract/sandbox_refusal.ts";
import { readReport } from "../../internal/report_line.ts";
import { AT_START_CWD } from "../../internal/start_cwd.ts";

export type { ProbeStage } from "./_probe_line.ts";

/**
 * The default open deadline of the probe: far above a slow store's open on a loaded machine.
 *
 * @example
 * ```ts
 * import { OPEN_DEADLINE_MS } from "./probe_store.ts";
 * console.log(OPEN_DEADLINE_MS); // 30000
 * ```
 */
export const OPEN_DEADLINE_MS = 30_000;

/**
 * Why the store could not be probed: its own error when it threw, how its child ended
 * when it died, or the deadline when it was still running past it.
 *
 * @example
 * ```ts
 * import type { ProbeFailure } from "./probe_store.ts";
 * function lead(failure: ProbeFailure): string {
 *   return failure.message.split("\n")[0]!; // e.g. `openStore threw: Error: disk on fire`
 * }
 * ```
 */
export interface ProbeFailure {
  /**
   * `threw` (loading the target, `openStore` or a first write threw: the child caught it),
   * `answered` (the first appends answered outside the contract: not ids, or `getMessages`
   * rows without their ids), `exited` (the child ended by itself first), or `deadline`
   * (still running past the open deadline; it was killed).
   */
  kind: "threw" | "answered" | "exited" | "deadline";
  /** Where the store threw, for `threw`. */
  stage?: ProbeStage;
  /** The thrown error's name, for `threw`. */
  name?: string;
  /** Whether a permission refusal is in the thrown error's cause chain. */
  permission?: boolean;
  /**
   * The whole message, leading with the store's own error
   * (`openStore threw: Error: <its message>`), then how the child ended and its stderr.
   */
  message: string;
  /** The child's exit code, when it exited. */
  exitCode?: number;
  /** Milliseconds from the spawn to the end. */
  elapsedMs: number;
}

/**
 * What the probe found.
 *
 * @example
 * ```ts
 * import type { StoreProbe } from "./probe_store.ts";
 * function label(probe: StoreProbe): string {
 *   if (probe.openError) return `cannot open: ${probe.openError.message.split("\n")[0]}`;
 *   return `${probe.engine.kind}, ${probe.methods.length} methods, ${probe.onDisk} on disk`;
 * }
 * ```
 */
export interface StoreProbe {
  /** What the store really ran on (`unknown` when it did not open). */
  engine: StoreEngine;
  /** The store's methods (empty when it did not open). */
  methods: string[];
  /** The journal mode observed on disk at the kill, or `unknown`. */
  onDisk: string;
  /** Why the leg was not honoured (a reason to skip), when it was not. */
  notHonoured?: string;
  /** Why the store could not be probed: never a skip, a failure. */
  openError?: ProbeFailure;
}

/**
 * Options of {@linkcode probeStore}.
 *
 * @example
 * ```ts
 * import { currentLeg } from "../../harness/legs.ts";
 * import type { ProbeOptions } from "./probe_store.ts";
 * const options: ProbeOptions = { leg: { ...currentLeg(), name: "delete" }, openDeadlineMs: 5000 };
 * ```
 */
export interface ProbeOptions {
  /** The leg (default: this process's, `currentLeg()`). */
  leg?: Leg;
  /** How long the store may take to open and take 3 appends (default 30 s). */
  openDeadlineMs?: number;
  /**
   * The target's `childPermissions` (default: read from the target; pass it when known).
   */
  permissions?: ChildPermissions;
}

const WAL_MAGIC = [0x377f0682, 0x377f0683];

/** A file's first bytes; `undefined` when it is missing or cannot be read (no evidence). */
function readBytes(path: string, length: number): Uint8Array | undefined {
  try {
    return readPrefix(path, length);
  } catch {
    return undefined;
  }
}

/** `3053002` → `3.53.2` (SQLITE_VERSION_NUMBER). */
function versionOf(number: number): string {
  return `${Math.floor(number / 1_000_000)}.${Math.floor(number / 1000) % 1000}.${number % 1000}`;
}

/**
 * What the file at `db` says about the SQLite that wrote it: the version of its last writer
 * (the header's SQLITE_VERSION_NUMBER at offset 96), `"unknown"` for a WAL-only database,
 * or `undefined` when it is not an SQLite database.
 *
 * @param db The database file.
 * @returns The version, `"unknown"`, or `undefined`.
 * @example
 * ```ts
 * import { lastWriterVersion } from "./probe_store.ts";
 * console.log(lastWriterVersion("/no/such/file")); // undefined
 * ```
 */
export function lastWriterVersion(db: string): string | undefined {
  const header = readBytes(db, 100);
  if (header && hasDatabaseHeader(header)) {
    const number = new DataView(header.buffer, header.byteOffset, 100).getUint32(96);
    return number > 3_000_000 ? versionOf(number) : "unknown";
  }
  // Everything still in the WAL: SQLite, of a version the WAL does not name.
  const wal = readBytes(`${db}-wal`, 4);
  if (wal?.length === 4 && WAL_MAGIC.includes(new DataView(wal.buffer).getUint32(0))) {
    return "unknown";
  }
  return undefined;
}

/**
 * The memory map of the process `pid` (`/proc/<pid>/maps`), or `undefined` where it cannot
 * be read (not Linux). Deno reads `/proc` only with every permission: without them, and
 * with the right to run deno, a `deno eval` (which has them) reads it.
 */
function mapsOf(pid: number): string | undefined {
  const path = `/proc/${pid}/maps`;
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotCapable)) return undefined;
  }
  const run = Deno.permissions.querySync({ name: "run", command: Deno.execPath() });
  if (run.state !== "granted") return undefined;
  try {
    const code = `Deno.stdout.writeSync(Deno.readFileSync(${JSON.stringify(path)}))`;
    const out = new Deno.Command(Deno.execPath(), {
      ...AT_START_CWD,
      args: ["eval", "--no-config", "--no-lock", code],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    return out.success ? new TextDecoder().decode(out.stdout) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether the process `pid` has `library` (by real path) mapped: `undefined` where
 * `/proc/<pid>/maps` cannot be read (not Linux, or neither every permission nor the right
 * to run deno).
 *
 * @param pid A live process.
 * @param library A shared library's path.
 * @returns Whether it is mapped, or `undefined` when unknown.
 * @example
 * ```ts
 * import { mapsLibrary } from "./probe_store.ts";
 * console.log(mapsLibrary(Deno.pid, "/no/such/library.so")); // false on Linux
 * ```
 */
export function mapsLibrary(pid: number, library: string): boolean | undefined {
  const maps = mapsOf(pid);
  if (maps === undefined) return undefined;
  let real = library;
  try {
    real = Deno.realPathSync(library);
  } catch {
    // A library that is not there is mapped by nobody.
  }
  return maps.split("\n").some((line) => line.endsWith(` ${real}`) || line.endsWith(` ${library}`));
}

/**
 * The store's engine from the evidence: the leg's library mapped in the writer's process
 * (`binding`), else the database file's header (`own-sqlite` with its last writer's
 * version), else `not-sqlite`. Where the maps cannot be read, a file last written by the
 * leg's library's version counts as `binding`.
 *
 * @param leg The leg the writer ran on.
 * @param mapped Whether the leg's library was mapped in the writer (`undefined`: unknown).
 * @param db The database file it wrote.
 * @returns The engine.
 * @example
 * ```ts
 * import { currentLeg } from "../../harness/legs.ts";
 * import { engineOf } from "./probe_store.ts";
 * console.log(engineOf(currentLeg(), false, "/no/such/file").kind); // not-sqlite
 * ```
 */
export function engineOf(leg: Leg, mapped: boolean | undefined, db: string): StoreEngine {
  const version = lastWriterVersion(db);
  if (mapped === true || (mapped === undefined && version === leg.sqliteVersion)) {
    return { kind: "binding", sqliteVersion: leg.sqliteVersion, library: leg.library };
  }
  if (version === undefined) return { kind: "not-sqlite" };
  return { kind: "own-sqlite", ...(version !== "unknown" ? { sqliteVersion: version } : {}) };
}

/**
 * How a test name or a table names the engine: `SQLite 3.40.1` (this project's binding on
 * the leg's library), `own SQLite 3.53.2`, `not SQLite`, or `engine unknown`.
 *
 * @param engine The engine.
 * @returns The label.
 * @example
 * ```ts
 * import { engineLabel } from "./probe_store.ts";
 * console.log(engineLabel({ kind: "own-sqlite", sqliteVersion: "3.53.2" })); // own SQLite 3.53.2
 * ```
 */
export function engineLabel(engine: StoreEngine): string {
  switch (engine.kind) {
    case "binding":
      return `SQLite ${engine.sqliteVersion}`;
    case "own-sqlite":
      return `own SQLite ${engine.sqliteVersion ?? "(version unknown)"}`;
    case "not-sqlite":
      return "not SQLite";
    default:
      return "engine unknown";
  }
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * The failure of a child that ended before it said it was ready, or (`deadlineMs` given)
 * was still running at the deadline and was killed.
 */
function failure(
  child: Child,
  target: string,
  leg: Leg,
  elapsedMs: number,
  deadlineMs: number | undefined,
): ProbeFailure {
  const status = child.exited!;
  if (deadlineMs !== undefined) {
    return {
      kind: "deadline",
      elapsedMs,
      message:
        `Gave up waiting for the store of ${target} to open and take 3 appends on leg ${leg.name}: the probe child was still running after ${deadlineMs} ms (open deadline ${deadlineMs} ms: raise CELLS_OPEN_DEADLINE_MS or openDeadlineMs for a slow store); it was killed; stderr: ${
          child.stderr.trim() || "(empty)"
        }`,
    };
  }
  let line: ProbeLine = {};
  try {
    line = readReport<ProbeLine>(child.stdout) ?? {};
  } catch {
    // No line: the child died some other way, said below.
  }
  const end = `the probe child exited with code ${status.code}${
    status.signal ? ` (signal ${status.signal})` : ""
  } after ${seconds(elapsedMs)}`;
  if (status.code === PROBE_THREW && line.answered) {
    return {
      kind: "answered",
      exitCode: status.code,
      elapsedMs,
      message: `${line.answered}\n(the store of ${target} on leg ${leg.name}: ${end})`,
    };
  }
  if (status.code === PROBE_THREW && line.threw) {
    const { stage, name, message, permission } = line.threw;
    const what = stage === "load" ? "loading the target" : stage;
    // A refusal is the sandbox's: said as every refusal is, with the declaration to make.
    const lead = permission
      ? refusalReason([{ pid: child.pid, call: what, name, message }])
      : `${what} threw: ${name}: ${message}`;
    return {
      kind: "threw",
      stage,
      name,
      permission,
      exitCode: status.code,
      elapsedMs,
      message:
        `${lead}\n(the store of ${target} on leg ${leg.name}: ${end})\n${child.stderr.trim()}`,
    };
  }
  return {
    kind: "exited",
    exitCode: status.code,
    elapsedMs,
    message:
      `The store of ${target} did not open and take 3 appends on leg ${leg.name}: ${end}\n${child.describe()}`,
  };
}

/**
 * Opens the target's store in a child on the leg with the cells' scoped permissions (and
 * what the target declares in `childPermissions`), creates a session, appends 3 messages,
 * and SIGKILLs the child while the store is open. While it is alive, `/proc/<pid>/maps`
 * says whether it loaded the leg's SQLite library; after the kill, the database file's
 * header says whether it is SQLite and which version wrote it last, and the journal mode
 * it ran in is observed before anything reopens it (no clean close comes first, so a
 * store that switches modes in `close()` cannot pass for one that honours the leg).
 *
 * A store that throws (or cannot be loaded) is reported by its own error, the deadline
 * only when the child was still running past it.
 *
 * @param target The target module.
 * @param options The leg, the open deadline, the target's child permissions.
 * @returns What the probe found; never throws for the store's faults.
 * @example
 * ```ts
 * import { engineLabel, probeStore } from "./probe_store.ts";
 * const probe = await probeStore(new URL("../reference_target.ts", import.meta.url));
 * console.log(engineLabel(probe.engine), probe.methods.includes("appendMessage")); // SQLite 3.x.y true
 * ```
 */
export async function probeStore(
  target: string | URL,
  options: ProbeOptions = {},
): Promise<StoreProbe> {
  const specifier = targetSpecifier(target);
  const leg = options.leg ?? currentLeg();
  const deadlineMs = options.openDeadlineMs ?? OPEN_DEADLINE_MS;
  const started = performance.now();
  let permissions = options.permissions;
  try {
    permissions ??= await declaredPermissions(specifier);
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    return unopened({
      kind: "threw",
      stage: "load",
      name: e.name,
      elapsedMs: Math.round(performance.now() - started),
      message: `loading the target threw: ${e.name}: ${e.message}`,
    });
  }
  const run = await RunDir.create("probe");
  const db = run.store("probe");
  const ready = run.file("probe.ready");
  const access = targetAccess(specifier);
  const scriptAccess = targetAccess(new URL("../contract/child_runtime.ts", import.meta.url).href);
  const child = spawnChild({
    script: new URL("./children/probe.ts", import.meta.url),
    args: [specifier, db, ready],
    runDir: run.path,
    library: leg.library,
    env: { ...legEnv(leg), [SANDBOX_REFUSALS_ENV]: sandboxRefusalsFile(run.path) },
    read: [...(access.read ?? []), ...(scriptAccess.read ?? [])],
    importHosts: [...(access.importHosts ?? []), ...(scriptAccess.importHosts ?? [])],
    ...(access.config ? { config: access.config } : {}),
    ...(permissions ? { permissions } : {}),
  });
  try {
    while (!exists(ready) && !child.exited && performance.now() - started < deadlineMs) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (!exists(ready)) {
      const elapsed = Math.round(performance.now() - started);
      // Past the deadline, alive: killed and reaped first, so that the message has the
      // whole stderr.
      const alive = !child.exited;
      if (alive) child.signal("SIGKILL");
      await child.status;
      return unopened(
        refused(run.path, elapsed) ??
          failure(child, specifier, leg, elapsed, alive ? deadlineMs : undefined),
      );
    }
    const mapped = mapsLibrary(child.pid, leg.library);
    try {
      await killWhileAlive(child);
    } catch {
      const elapsed = Math.round(performance.now() - started);
      const refusal = refused(run.path, elapsed);
      if (refusal) return unopened(refusal);
      return unopened({
        kind: "exited",
        ...(child.exited ? { exitCode: child.exited.code } : {}),
        elapsedMs: elapsed,
        message:
          `The store of ${specifier} opened on leg ${leg.name}, then its probe child ended by itself before the probe's kill: ${child.describe()}`,
      });
    }
    const line = readReport<ProbeLine>(child.stdout) ?? {};
    const audit = legVerdict(leg, [observeJournalMode(db, "probe (killed while open)", true)]);
    const why = line.journalModeReason && line.journalModeReason !== "as requested"
      ? ` (the store: ${line.journalModeReason})`
      : "";
    return {
      engine: engineOf(leg, mapped, db),
      methods: line.methods ?? [],
      onDisk: audit.onDisk,
      ...(audit.reason ? { notHonoured: `${audit.reason}${why}` } : {}),
    };
  } finally {
    await reapAll([child]);
    await Deno.remove(run.path, { recursive: true }).catch(() => {});
  }
}

/** The failure of a probe child that the sandbox refused a permission, if it was. */
function refused(runDir: string, elapsedMs: number): ProbeFailure | undefined {
  const refusals = readSandboxRefusals(sandboxRefusalsFile(runDir));
  if (!refusals.length) return undefined;
  const { call, name } = refusals[0]!;
  const stages: readonly string[] = ["openStore", "createSession", "appendMessage", "getMessages"];
  return {
    kind: "threw",
    ...(stages.includes(call) ? { stage: call as ProbeStage } : {}),
    name,
    permission: true,
    elapsedMs,
    message: refusalReason(refusals),
  };
}

function unopened(openError: ProbeFailure): StoreProbe {
  return { engine: { kind: "unknown" }, methods: [], onDisk: "unknown", openError };
}
