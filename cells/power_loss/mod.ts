/**
 * The power-loss tier, for any store. A SIGKILL keeps the page cache, so it can never
 * show a commit lost to power loss (SQLite: transactions survive an application crash
 * whatever `synchronous` is). Here the writer child runs under the LD_PRELOAD
 * file-system call recorder (`recorder/`), is SIGKILLed, and every crash state a power
 * loss at each sync point of the run (and at the kill) may leave under a named
 * persistence profile (`posix` or `ext4-ordered`: unsynced writes dropped, any subset,
 * reordered, torn at sectors; names durable per profile) is checked in-process through
 * the target's own store, with the judge of the clause's SIGKILL cell:
 *
 * - durability: every operation acknowledged before a state's instant is in it (and in
 *   what the SIGKILL itself left);
 * - consistency, of every state: it recovers to a valid store (integrity, the store's
 *   invariants, recovery deterministic) holding the cell's clause (a contiguous prefix
 *   for cell 1, whole-or-absent rotations for cell 3, exactly the state of a prefix of
 *   the edit steps for cell 4; for cell 5, after recoverers race on it, each effect at
 *   most once and no obligation silently lost; cell 5 checks the kill's instant only).
 *
 * States that SQLite recovers to identical files share one verdict
 * (`recorder/recovered.ts`). Cell 5's receiver (the inbox file) is outside the power
 * loss: what the provider got stays got. Linux/glibc with `cc` only: elsewhere each cell
 * is a SKIP with the reason, never a pass.
 *
 * Each clause's folder holds its power-loss cell (`prefix_durability/power_loss.ts`,
 * `rotation_atomicity/…`, `fork_determinism/…`, `outbox_exactly_once/…`,
 * `resume_resolution/…`, `batch_atomicity/…`, `ends_and_reopens/…`, `lease_renewal/…`,
 * `pending_handoffs/…`), judging its crash states with the judge of its SIGKILL cell; their
 * shared machinery is here (`record.ts`, `writer_run.ts` (a cell's writer recorded, killed
 * after the k-th acknowledgement, every state judged), `steps.ts`, `resume.ts`,
 * `pattern.ts`), and `../power_loss_cells.ts` gives them all at once. Cells 8 to 12 are
 * checked against the reference store and their planted mutants by
 * `cells_8_to_12_itest.ts`.
 *
 * @example
 * ```ts ignore
 * import { powerLossTotals } from "./mod.ts";
 * console.log(powerLossTotals());
 * ```
 *
 * @module
 */
export {
  type PowerLossKill,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
  type PowerLossTotals,
  powerLossTotals,
  type StateVerdict,
} from "./record.ts";
export type { ResumeTally } from "./resume.ts";
export type { CellOptions } from "../engine/options.ts";
export type { Diagnosis } from "../engine/report.ts";
export { DIAGNOSES, type PatternId } from "../engine/diagnoses.ts";
export type { Leg, LegName } from "../../harness/legs.ts";
export type { CrashState, FileSet, Profile, TornWrite } from "../../recorder/crash_states.ts";
