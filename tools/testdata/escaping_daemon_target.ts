/**
 * Test target: the reference store, but a daemon (a `sleep` in its own session) is left
 * running, never stopped, by each process that is not one of the cells' children: one
 * started when a tool imports the target, one when a `deno test` of the cells opens the
 * store itself (to read what survived), one when a library's share of the sweep opens it
 * (its oracle). The cells' children start none, so every cell passes: only the survivor
 * checks of the tool, the leg and the tier can find these daemons.
 *
 * @module
 */
import { crashPoints as storeCrashPoints, SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../../cells/contract/target.ts";

/** Each daemon's `sleep` argument, by where it was started: recognisable and long. */
export const DAEMONS = {
  tool: "3599.71",
  test: "3599.72",
  library: "3599.73",
} as const;

let started = false;

/**
 * A run's own mark on its daemons, so that tests running side by side tell theirs apart:
 * the digits of an evidence folder named `escaping-<digits>` (the one variable every
 * process of a run gets), as a second, tiny `sleep` argument.
 *
 * @param evidenceDir The run's `CELLS_EVIDENCE_DIR`.
 * @returns The extra argument, or none.
 */
export function runMark(evidenceDir: string | undefined): string[] {
  const digits = /escaping-(\d+)$/.exec(evidenceDir ?? "")?.[1];
  return digits ? [`0.${digits}`] : [];
}

/** Starts this process's daemon once, in its own session, and forgets it. */
function leave(where: keyof typeof DAEMONS): void {
  if (started) return;
  started = true;
  const daemon = new Deno.Command("sleep", {
    args: [DAEMONS[where], ...runMark(Deno.env.get("CELLS_EVIDENCE_DIR"))],
    detached: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  daemon.unref();
}

// A tool (not a test that imports this module for its constants).
const main = Deno.mainModule;
if (main.includes("/tools/") && !main.endsWith("_test.ts")) leave("tool");

/** Opens the reference store; a test process or a sweep's share leaves its daemon. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  if (main.endsWith("_test.ts")) leave("test");
  if (main.endsWith("/children/library.ts")) leave("library");
  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
}

/** The reference store's crash points. */
export function crashPoints(): string[] {
  return storeCrashPoints();
}
