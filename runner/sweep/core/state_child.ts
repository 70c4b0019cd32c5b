// The sweep's children and reference runs: the child script spawned on a leg with the
// target's access, a bounded wait for it, database copies, and the uncrashed run of a
// program in this process that every crash state of it is compared with.
import { dirname, join } from "node:path";
import { type Child, reapAll, spawnChild, type SpawnOptions } from "../../../harness/child.ts";
import type { RunDir } from "../../../harness/evidence.ts";
import { type Leg, legEnv } from "../../../harness/legs.ts";
import type { ChildPermissions } from "../../../harness/permissions.ts";
import { copyTree } from "../../../internal/fs.ts";
import { targetAccess } from "../../../cells/contract/target_access.ts";
import { readFolder } from "../../../recorder/image.ts";
import type { Reference } from "./oracle.ts";
import { type ProgramOp, ProgramRunner, snapshot, type SweepStore } from "./program.ts";
import type { CrashImage } from "./types.ts";

/** The reference store's target module, the sweep's default. */
export const REFERENCE_TARGET: string =
  new URL("../../../cells/reference_target.ts", import.meta.url).href;
/** The sweep's child script. */
export const SWEEP_CHILD: URL = new URL("./children/sweep.ts", import.meta.url);
/** A child that has not died after this long is killed and its state failed. */
export const CHILD_DEADLINE_MS = 30_000;

/** What every state of one leg shares. */
export interface LegContext {
  /** The leg and its library. */
  leg: Leg;
  /** The target module's specifier. */
  target: string;
  /** The seed of the message texts. */
  seed: number;
  /** The leg's run directory; each state gets a folder in it. */
  root: RunDir;
  /** The seeded store every state starts from. */
  template: string;
  /** Opens the store on the leg, in this process. */
  openStore: (path: string) => Promise<SweepStore>;
  /** The uncrashed runs, by start state and program (shared by the states). */
  references: Map<string, Promise<Reference>>;
  /** How crash states become the files checked (unset: as the child left them). */
  crashImage?: CrashImage;
  /** Keep failing states as evidence. */
  keepEvidence: boolean;
  /** The extra permissions the target declares for its children. */
  permissions?: ChildPermissions;
}

/** Where and how {@linkcode spawnSweepChild} starts the child. */
export interface SweepChildOptions {
  /** The child's run directory. */
  dir: string;
  /** Extra environment. */
  env?: Record<string, string> | undefined;
  /** How to spawn it (a crash image may preload a recorder; default `spawnChild`). */
  spawn?: ((options: SpawnOptions) => Child) | undefined;
}

/**
 * Spawns the sweep's child script on the leg with the target's access.
 *
 * @param ctx The leg.
 * @param args The mode, then its arguments after the target.
 * @param options The run directory, extra environment, how to spawn it.
 * @returns The running child.
 */
export function spawnSweepChild(
  ctx: Pick<LegContext, "leg" | "target" | "permissions">,
  args: string[],
  options: SweepChildOptions,
): Child {
  const access = targetAccess(ctx.target);
  const spawn = options.spawn ?? spawnChild;
  return spawn({
    script: SWEEP_CHILD,
    args: [args[0]!, ctx.target, ...args.slice(1)],
    runDir: options.dir,
    library: ctx.leg.library,
    env: { ...legEnv(ctx.leg), ...options.env },
    ...(access.read ? { read: access.read } : {}),
    ...(access.importHosts ? { importHosts: access.importHosts } : {}),
    ...(ctx.permissions ? { permissions: ctx.permissions } : {}),
  });
}

/** Awaits a child's exit, killing it at the deadline; `true` when it ended on its own. */
export async function settle(child: Child, deadlineMs = CHILD_DEADLINE_MS): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = await Promise.race([
    child.status.then(() => false),
    new Promise<boolean>((resolve) => timer = setTimeout(() => resolve(true), deadlineMs)),
  ]);
  clearTimeout(timer);
  if (timedOut) await reapAll([child]);
  return !timedOut;
}

/**
 * Runs a program uncrashed in this process on a copy of `start` (in a folder made under
 * `under`): the state before and after each operation, what each returned, and the
 * store's files after each (what a resume starts from).
 *
 * @param refs How to open the store, the seed of the message texts and where the run's
 * folder goes (`dir`).
 * @param program The operations.
 * @param start The database to start from.
 * @returns The reference run.
 */
export async function referenceRun(
  refs: Pick<References, "openStore" | "seed" | "dir">,
  program: readonly ProgramOp[],
  start: string,
): Promise<Reference> {
  const { openStore, seed } = refs;
  const dir = Deno.makeTempDirSync({ dir: refs.dir, prefix: "reference-" });
  const db = join(dir, "store.db");
  // The start's folder holds the store's files alone (each sweep gives its store a folder
  // of its own): copied whole, whatever names the store gave its files.
  copyTree(dirname(start), dir);
  const store = await openStore(db);
  try {
    const runner = new ProgramRunner(store, seed);
    const snaps = [await snapshot(store)];
    // The run's folder holds the store's files alone.
    const files = [readFolder(dir)];
    const results: unknown[] = [];
    for (const [i, op] of program.entries()) {
      results.push(await runner.run(op, i));
      snaps.push(await snapshot(store));
      files.push(readFolder(dir));
    }
    return { snaps, results, files };
  } finally {
    await store.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

/** What {@linkcode reference} shares between the states: the store, seed, cache, folder. */
export interface References {
  /** Opens the store on the leg, in this process. */
  openStore: (path: string) => Promise<SweepStore>;
  /** The seed of the message texts. */
  seed: number;
  /** The uncrashed runs, by start state and program. */
  references: Map<string, Promise<Reference>>;
  /** Where the reference runs' folders go. */
  dir: string;
}

/** The reference run of a program from `start`, made once and shared by its states. */
export function reference(
  refs: References,
  program: readonly ProgramOp[],
  start: string,
): Promise<Reference> {
  const key = `${start}|${program.join("+")}`;
  let result = refs.references.get(key);
  if (!result) {
    result = referenceRun(refs, program, start);
    refs.references.set(key, result);
  }
  return result;
}
