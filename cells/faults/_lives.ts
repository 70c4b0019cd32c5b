// What F2 and F5 share: their children spawned as the cells spawn theirs (the leg's
// environment, the target's access and declared permissions), each awaited within a
// deadline, and a store folder's files listed and copied.
import { stderrLine } from "../../internal/stderr_line.ts";
import type { Child } from "../../harness/child.ts";
import { spawnFor, type TargetSpawn } from "../engine/run.ts";
import { type JournalObservation, type Leg, legVerdict } from "../../harness/legs.ts";
import type { FaultClauseOptions, FaultVerdict } from "./types.ts";

/** The spawner of a clause's children, writing only inside `options.dir`. */
export function clauseSpawn(options: FaultClauseOptions): TargetSpawn {
  return spawnFor({
    leg: options.leg,
    target: options.target,
    runDir: options.dir,
    permissions: options.permissions,
  });
}

/** Awaits a child's exit; SIGKILLs its tree once `deadlineMs` passed. Never throws. */
export async function finished(
  child: Child,
  deadlineMs: number,
): Promise<{ status: Deno.CommandStatus; timedOut: boolean }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), deadlineMs);
  });
  try {
    const first = await Promise.race([child.status, timeout]);
    if (first !== "late") return { status: first, timedOut: false };
    child.signal("SIGKILL");
    return { status: await child.status, timedOut: true };
  } finally {
    clearTimeout(timer);
  }
}

/** A one-line account of how a child ended, with its stderr's tail. */
export function childEnd(child: Child, timedOut: boolean): string {
  const stderr = stderrLine(child.stderr);
  const status = child.exited;
  const how = timedOut
    ? "was killed at its deadline"
    : `exited with code ${status?.code}${status?.signal ? ` (${status.signal})` : ""}`;
  return `${how}${stderr ? `; stderr: ${stderr.slice(0, 400)}` : ""}`;
}

/**
 * A SKIP when the store's file was not in the leg's journal mode (or the leg does not
 * apply: the file is not SQLite), from observations of it; `undefined` when honoured.
 */
export function legSkip(
  leg: Leg,
  observations: readonly JournalObservation[],
): FaultVerdict | undefined {
  const audit = legVerdict(leg, observations);
  if (audit.honoured) return undefined;
  return {
    status: "SKIP",
    reason: audit.reason ?? `leg ${leg.name} not honoured: ${audit.onDisk}`,
    ...(audit.notApplicable ? { skipKind: "default-leg-only" as const } : {}),
    judged: 0,
    figures: { onDisk: audit.onDisk },
  };
}
