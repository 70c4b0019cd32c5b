// The fault tier's fresh-process reads: each state a faulted run left (or a power loss
// after it may leave) is opened by a reader child with the cells' narrow permissions and
// no fault, and what it found comes back typed.
import { join } from "node:path";
import { clauseSpawn, finished } from "./_lives.ts";
import type { FaultClauseOptions } from "./types.ts";

/** One state to read. */
export interface ReadJob {
  /** The database path inside the state's folder. */
  db: string;
  /** Append this text after reading and read it back (the store works again). */
  append?: string;
}

/** What the reader found in one state. */
export interface ReadResult {
  /** The database path. */
  db: string;
  /** Why the store could not open (then nothing else is set). */
  open?: string;
  /** The session's messages, or what reading them threw. */
  read?: { texts: string[]; ids: number[] } | { threw: string };
  /** What `checkInvariants` said, when the store has it. */
  invariants?: string[];
  /** How the extra append went. */
  append?: { acked: true } | { threw: { name: string; message: string } };
  /** The session after the extra append, when it was acknowledged. */
  readBack?: { texts: string[]; ids: number[] } | { threw: string };
}

const READER = new URL("./children/fault_reader.ts", import.meta.url);
const READ_DEADLINE_MS = 120_000;

/**
 * Reads `jobs` in one fresh child.
 *
 * @param options The clause's target, leg and folder.
 * @param jobs The states.
 * @returns One result per job, or why the reader itself failed (and whether it hung).
 */
export async function readStates(
  options: FaultClauseOptions,
  jobs: readonly ReadJob[],
): Promise<ReadResult[] | { failed: string; hung?: true }> {
  if (!jobs.length) return [];
  const tag = crypto.randomUUID().slice(0, 8);
  const jobsPath = join(options.dir, `reads-${tag}.json`);
  const outPath = join(options.dir, `reads-${tag}.out.json`);
  Deno.writeTextFileSync(jobsPath, JSON.stringify(jobs));
  // As the cells spawn theirs: the target's deno.json (its import map, its unstable
  // features), its folder, its declared permissions.
  const child = clauseSpawn(options)(READER, [jobsPath, outPath]);
  const { status, timedOut } = await finished(child, READ_DEADLINE_MS);
  try {
    if (timedOut) {
      return { failed: `the reader hung for ${READ_DEADLINE_MS / 1000} s`, hung: true };
    }
    if (!status.success) {
      return { failed: `the reader exited with ${status.code}: ${child.stderr.slice(-600)}` };
    }
    return JSON.parse(Deno.readTextFileSync(outPath)) as ReadResult[];
  } finally {
    for (const path of [jobsPath, outPath]) {
      try {
        Deno.removeSync(path);
      } catch { /* never written */ }
    }
  }
}
