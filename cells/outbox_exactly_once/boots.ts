// Cell 5's boots after the first clean one: two later boots must claim nothing, send
// nothing and change nothing in the store's folder (every file beside the database too;
// SQLite's -shm, shared memory that is not state, and an empty -wal or -journal aside: see
// store_folder.ts); then a new life of the application records and sends new obligations on
// the recovered file, is killed sent-unacked, and one more boot recovers it: the file must
// hold both lives' work. On a plain transport these boots leave `idempotentTransport` out,
// which the contract reads as a plain transport.
import { type Child, classifyExit } from "../../harness/child.ts";
import type { CellRun } from "../engine/cell.ts";
import { untilExited } from "../moves/kill.ts";
import { type Arrival, readInbox, SENDER_AFTER_SEND } from "./inbox.ts";
import { type RecoveredOutbox, recoverOutbox } from "./state.ts";
import { soundness } from "../engine/state_check.ts";
import { RECOVERER, SENDER } from "./_children.ts";
import {
  fileEntry,
  folderChanges,
  type FolderSnapshot,
  snapshotStoreFolder,
} from "./store_folder.ts";

/** A scenario's files. */
interface Files {
  idempotent: boolean;
  dir: string;
  db: string;
  inbox: string;
}

/** One later boot: how it ended, what it claimed, what it changed. */
export interface LaterBoot {
  name: string;
  child: Child;
  /** Entries of the store's folder, or the platform's inbox, the boot changed. */
  changed: string[];
}

/** The new life: its sender, its recovery boot, the file before and after. */
export interface ResumedLife {
  sender: Child;
  boot: Child;
  /** The first life's obligations as the new life began. */
  before: RecoveredOutbox;
  /** Whether the platform's inbox before the new life is a prefix of the one after. */
  inboxKept: boolean;
  reads: [RecoveredOutbox, RecoveredOutbox];
  sound: string[];
  arrivals: Arrival[];
}

/** What a new life needs: the target, a way to spawn the cells' children, and the leg audit. */
export type LifeRunner = Pick<CellRun, "target" | "spawn"> & {
  observeLeg?: CellRun["observeLeg"];
};

/** The new life's obligations (`children/sender.ts` with this prefix) and its kill point. */
export const LIFE_TWO = { prefix: "life2 effect", obligations: 3, at: 1, point: SENDER_AFTER_SEND };

/** The store's folder (see store_folder.ts) and the platform's inbox. */
function snapshot(f: Files): FolderSnapshot {
  const files = snapshotStoreFolder(f.db);
  try {
    files.set("the platform's inbox", fileEntry(Deno.readFileSync(f.inbox)));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return files;
}

/** The transport flag of a boot on these files: on a plain one the option is left out. */
function transportFlag(f: Files): string {
  return f.idempotent ? "1" : "-";
}

/** Two boots after the first clean one, each compared before and after, entry by entry. */
export async function laterBoots(ctx: CellRun, f: Files): Promise<LaterBoot[]> {
  const boots: LaterBoot[] = [];
  for (const name of ["boot 2", "boot 3"]) {
    const before = snapshot(f);
    const child = ctx.spawn(RECOVERER, [
      f.db,
      f.inbox,
      f.dir,
      name.replace(" ", ""),
      "-",
      transportFlag(f),
    ]);
    await untilExited(child, `${name} to finish`);
    boots.push({ name, child, changed: folderChanges(before, snapshot(f)) });
  }
  return boots;
}

/**
 * A new life on the recovered file: the sender records `LIFE_TWO.obligations` new
 * obligations, delivers the first and dies right after sending the second; one boot
 * recovers it. The file and the platform are read again.
 */
export async function resumeLife(ctx: LifeRunner, f: Files): Promise<ResumedLife> {
  const before = await recoverOutbox(ctx.target, f.db);
  let inboxBefore = new Uint8Array();
  try {
    inboxBefore = Deno.readFileSync(f.inbox);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const sender = ctx.spawn(
    SENDER,
    [f.db, f.inbox, String(LIFE_TWO.obligations), "-", "1", LIFE_TWO.prefix],
    { env: { SESSION_DB_CRASH_AT: `${LIFE_TWO.point}@${LIFE_TWO.at + 1}` } },
  );
  await untilExited(sender, `the new life's sender to reach ${LIFE_TWO.point}`);
  if (classifyExit(sender.exited!).kind === "killed") {
    ctx.observeLeg?.(f.db, `new life: ${LIFE_TWO.point}`, true);
  }
  const boot = ctx.spawn(RECOVERER, [
    f.db,
    f.inbox,
    f.dir,
    "life2-boot",
    "-",
    transportFlag(f),
  ]);
  await untilExited(boot, "the new life's boot to finish");
  const inboxAfter = Deno.readFileSync(f.inbox);
  const reads: [RecoveredOutbox, RecoveredOutbox] = [
    await recoverOutbox(ctx.target, f.db),
    await recoverOutbox(ctx.target, f.db),
  ];
  return {
    sender,
    boot,
    before,
    inboxKept: inboxBefore.every((byte, i) => inboxAfter[i] === byte),
    reads,
    sound: soundness(f.db, reads, reads[0].invariants),
    arrivals: readInbox(f.inbox),
  };
}
