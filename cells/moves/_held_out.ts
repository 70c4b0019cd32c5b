// Whether a process released while another is stopped is held out by the stopped one's
// lock: the recorder makes a file when one of its lock calls is refused, and a refusal
// that lasts without the move landing means it waits for the stopped process. A refusal
// that passes (a WAL read slot another reader holds) lets the move land within the time.
import { recorderEnv } from "../../recorder/record.ts";
import { exists } from "../../internal/fs.ts";

/** How long a refusal is watched before the process counts as held out. */
export const HELD_OUT_MS = 50;

/** The recorder's variables that note a refused lock call of a process in `refusedFile`. */
export function refusalEnv(
  library: string,
  at: { dir: string; who: string },
): Record<string, string> {
  return recorderEnv({
    library,
    watched: `${at.dir}/db`,
    log: `${at.dir}/${at.who}.fsrec.log`,
    refusedFile: refusedFileOf(at),
  });
}

/** The file the recorder makes when `who` is refused a lock call. */
export function refusedFileOf(at: { dir: string; who: string }): string {
  return `${at.dir}/${at.who}.refused`;
}

/**
 * The file the recorder also makes when `who` is refused a name made only if missing (a
 * lock directory or lock file taken by another process): no kernel lock table shows that
 * lock's holder, so this refusal alone says the process waits for a stopped one.
 */
export function nameRefusedFileOf(at: { dir: string; who: string }): string {
  return `${refusedFileOf(at)}.name`;
}

/**
 * A check, started as the process is released, that turns true once it has been refused a
 * lock for {@linkcode HELD_OUT_MS}; a refusal noted in `file` before its release is
 * forgotten. `refused` reads the refusals another way (default: `file` exists).
 */
export function heldOut(file: string, refused = () => exists(file)): () => boolean {
  try {
    Deno.removeSync(file);
  } catch { /* never refused */ }
  let since: number | undefined;
  return () => {
    if (!refused()) return false;
    since ??= performance.now();
    return performance.now() - since >= HELD_OUT_MS;
  };
}
