// Cell 5's boots after the first clean one: two later boots must claim nothing, send
// nothing and change no byte of the store's files (SQLite's -shm, shared memory that is
// not state, and an empty -wal or -journal aside); then a new life of the application records and sends new obligations
// on the recovered file, is killed sent-unacked, and one more boot recovers it: the file
// must hold both lives' work.
import { type Child, classifyExit } from "../../harness/child.ts";
import type { CellRun } from "../engine/cell.ts";
import { untilExited } from "../moves/kill.ts";
import { type Arrival, readInbox, SENDER_AFTER_SEND } from "./inbox.ts";
import { type RecoveredOutbox, recoverOutbox } from "./state.ts";
import { soundness } from "../engine/state_check.ts";
import { RECOVERER, SENDER } from "./_children.ts";

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
  /** Files of the store, or the platform's inbox, whose bytes the boot changed. */
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

function snapshot(f: Files): Map<string, Uint8Array> {
  const folder = f.db.slice(0, f.db.lastIndexOf("/"));
  const base = f.db.slice(folder.length + 1);
  const files = new Map<string, Uint8Array>();
  for (const entry of Deno.readDirSync(folder)) {
    if (!entry.isFile || !entry.name.startsWith(base) || entry.name.endsWith("-shm")) continue;
    const bytes = Deno.readFileSync(`${folder}/${entry.name}`);
    // An empty WAL or journal holds nothing: SQLite creates and removes them as it opens.
    if (bytes.length === 0 && /-(wal|journal)$/.test(entry.name)) continue;
    files.set(entry.name, bytes);
  }
  try {
    files.set("the platform's inbox", Deno.readFileSync(f.inbox));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return files;
}

function differences(before: Map<string, Uint8Array>, after: Map<string, Uint8Array>): string[] {
  const out: string[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const [a, b] = [before.get(name), after.get(name)];
    if (!a) out.push(`${name} created (${b!.length} bytes)`);
    else if (!b) out.push(`${name} removed (it held ${a.length} bytes)`);
    else if (a.length !== b.length) out.push(`${name} went from ${a.length} to ${b.length} bytes`);
    else {
      const at = a.findIndex((byte, i) => byte !== b[i]);
      if (at >= 0) out.push(`${name} changed at byte ${at} (${a.length} bytes)`);
    }
  }
  return out;
}

/** Two boots after the first clean one, each compared before and after, byte for byte. */
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
      f.idempotent ? "1" : "0",
    ]);
    await untilExited(child, `${name} to finish`);
    boots.push({ name, child, changed: differences(before, snapshot(f)) });
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
    f.idempotent ? "1" : "0",
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
