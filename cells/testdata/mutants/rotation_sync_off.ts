/**
 * Mutant (power-loss tier, cell 8): a rotation (`publishCompressionChild`, then
 * `releaseCompressionLock`) commits with `synchronous=OFF`, in one transaction each as
 * the reference does. A SIGKILL keeps the page cache, so the SIGKILL cells stay GREEN; a
 * power loss drops an acknowledged rotation, and its chain resolves to the parent again.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openUnsyncedMutant } from "./_mutant.ts";
import { type Publish, publishWith } from "./_publish.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openUnsyncedMutant(path, options, ({ raw }) => ({
    publishCompressionChild: (publish: Publish) =>
      publishWith(
        raw,
        publish,
        (lock, now) => lock?.holder === publish.holder && lock.expires_at > now,
      ),
    releaseCompressionLock: (sessionId: string, holder: string) =>
      raw.transaction(() =>
        raw.prepare("DELETE FROM compression_locks WHERE session_id = ? AND holder = ?").run(
          sessionId,
          holder,
        ) === 1
      ).immediate(),
  }));
}

/** The crash points it honours: none in the rotation. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild", "releaseCompressionLock"]);
}
