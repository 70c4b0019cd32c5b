/**
 * The power-loss tier's writer for `deno task powerloss`: the reference store whose
 * sessions and appends commit with `SESSION_DB_SYNCHRONOUS` (`OFF`, `NORMAL`, `FULL` or
 * `EXTRA`; honoured by this target only). Unset, it is the reference store itself (how
 * the checker reads crash states back).
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { mutantCrashPoints } from "./mutants/_mutant.ts";
import {
  openWithSynchronous,
  type Synchronous,
  SYNCHRONOUS_LEVELS,
} from "./mutants/_synchronous.ts";

function readLevel(): string | undefined {
  try {
    return Deno.env.get("SESSION_DB_SYNCHRONOUS")?.toUpperCase() || undefined;
  } catch {
    return undefined; // a child without the variable in its env allow-list
  }
}

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): unknown {
  const level = readLevel();
  if (!level) {
    return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
  }
  if (!(SYNCHRONOUS_LEVELS as readonly string[]).includes(level)) {
    throw new Error(
      `Invalid SESSION_DB_SYNCHRONOUS "${level}": use one of ${SYNCHRONOUS_LEVELS.join(", ")}`,
    );
  }
  return openWithSynchronous(path, options, level as Synchronous);
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["createSession", "appendMessage"]);
}
