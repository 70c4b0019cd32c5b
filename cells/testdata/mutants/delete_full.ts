/**
 * Mutant (power-loss tier, cell 1): a rollback-journal (DELETE) store whose sessions and
 * appends commit with `synchronous=FULL` instead of `EXTRA`. FULL unlinks the journal at
 * commit without syncing the folder, so after a power loss the journal can come back hot
 * and roll back the last acknowledged commit; a SIGKILL loses nothing, so the SIGKILL
 * cells stay GREEN. It always runs in DELETE mode (the WAL leg is skipped: not honoured).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints } from "./_mutant.ts";
import { openWithSynchronous } from "./_synchronous.ts";

/** Opens the mutant. */
export function openStore(path: string, _options: StoreOptions): unknown {
  return openWithSynchronous(path, { journalMode: "delete" }, "FULL");
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["createSession", "appendMessage"]);
}
