// Builds cell 5's delivery-policy mutants: the reference store with its own recovery sweep,
// written through a raw connection, broken in one way each, keeping a declared policy.
import { processAlive } from "../../../session_db/process.ts";
import {
  type Database,
  DEFAULT_RECOVERY_MARKER,
  type DeliveryPolicy,
  type SessionDB,
} from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** How a mutant's sweep differs from a correct one keeping `policy`. */
export interface SweepBug {
  /** The policy the sweep keeps (and the mutant declares, unless `declares` says). */
  policy: DeliveryPolicy;
  /** The policy the mutant declares, when it lies about it. */
  declares?: DeliveryPolicy;
  /**
   * What it does with a maybe-sent obligation on a transport that does not deduplicate,
   * instead of its policy's: resend it without a marker, or book it delivered.
   */
  maybeSent?: "resend unmarked" | "book delivered";
  /** Reads the open rows outside its write transaction and claims them without a guard. */
  withoutCas?: boolean;
  /**
   * Takes rows a recovery settled again, once that recovery is dead, and resends them:
   * `unknown` ones (at-most-once), or ones delivered by a resend (marked).
   */
  retakesSettled?: boolean;
  /** Settling one `unknown`, records the reason and the owner but leaves it attempting. */
  forgetsState?: boolean;
  /** Returns a resend with the fence it read, not the one it wrote. */
  staleFence?: boolean;
  /** The recovery marker it returns on a resend (default the reference's). */
  marker?: string;
  /** Claims at most this many obligations per call, leaving the rest for a later sweep. */
  cap?: number;
  /** Takes an omitted `idempotentTransport` for `true` (a deduplicating transport). */
  omittedIsIdempotent?: boolean;
}

interface Row {
  obligation_id: string;
  state: string;
  delivery_fence: number;
  owner_pid: number;
  attempts: number;
}

/** The mutant's sweep: reads, guards and claims the obligations as `bug` says. */
class PolicySweep {
  readonly #raw: Database;
  readonly #bug: SweepBug;
  readonly #marked: boolean;

  constructor(raw: Database, bug: SweepBug) {
    this.#raw = raw;
    this.#bug = bug;
    this.#marked = bug.policy === "marked-at-least-once";
  }

  /** The obligations a sweep considers. */
  read(): Row[] {
    const bug = this.#bug;
    const settled = bug.retakesSettled
      ? this.#marked ? " OR (state = 'delivered' AND attempts > 1)" : " OR state = 'unknown'"
      : "";
    return this.#raw.prepare(
      `SELECT obligation_id, state, delivery_fence, owner_pid, attempts FROM outbox
       WHERE state IN ('pending', 'attempting')${settled} ORDER BY created_at, obligation_id`,
    ).all<Row>();
  }

  /** The predicate a claim's UPDATE takes: compare-and-swap, or (the bug) none. */
  #guard(row: Row) {
    return this.#bug.withoutCas
      ? ["obligation_id = ?", [row.obligation_id]] as const
      : ["obligation_id = ? AND state = ? AND delivery_fence = ?", [
        row.obligation_id,
        row.state,
        row.delivery_fence,
      ]] as const;
  }

  /** Claims `rows` of dead owners; what each claim decided. */
  claim(
    rows: Row[],
    idempotent: boolean,
  ): { id: string; action: "send" | "resend" | "unknown"; fence: number }[] {
    const raw = this.#raw, bug = this.#bug, marked = this.#marked;
    const guard = (row: Row) => this.#guard(row);
    const out: { id: string; action: "send" | "resend" | "unknown"; fence: number }[] = [];
    for (const row of rows) {
      if (bug.cap !== undefined && out.length >= bug.cap) break;
      if (row.owner_pid === Deno.pid || processAlive(row.owner_pid)) continue;
      const [where, args] = guard(row);
      const now = Date.now() / 1000;
      if (row.state === "pending") {
        raw.prepare(`UPDATE outbox SET owner_pid = ?, updated_at = ? WHERE ${where}`)
          .run(Deno.pid, now, ...args);
        out.push({ id: row.obligation_id, action: "send", fence: row.delivery_fence });
      } else if (
        row.state !== "attempting" || idempotent || marked || bug.maybeSent === "resend unmarked"
      ) {
        raw.prepare(
          `UPDATE outbox SET state = 'attempting', owner_pid = ?, updated_at = ?,
             attempts = attempts + 1, delivery_fence = delivery_fence + 1 WHERE ${where}`,
        ).run(Deno.pid, now, ...args);
        const fence = bug.staleFence ? row.delivery_fence : row.delivery_fence + 1;
        out.push({ id: row.obligation_id, action: "resend", fence });
      } else if (bug.maybeSent === "book delivered") {
        raw.prepare(
          `UPDATE outbox SET state = 'delivered', owner_pid = ?, updated_at = ? WHERE ${where}`,
        )
          .run(Deno.pid, now, ...args);
        out.push({ id: row.obligation_id, action: "unknown", fence: row.delivery_fence });
      } else {
        raw.prepare(
          `UPDATE outbox SET state = ?, owner_pid = ?, updated_at = ?, last_error = ? WHERE ${where}`,
        ).run(
          bug.forgetsState ? row.state : "unknown",
          Deno.pid,
          now,
          `owner pid ${row.owner_pid} died while it was attempting; not resent`,
          ...args,
        );
        out.push({ id: row.obligation_id, action: "unknown", fence: row.delivery_fence });
      }
    }
    return out;
  }
}

/** Opens the reference store with `bug`'s sweep. */
export function openPolicyMutant(path: string, options: StoreOptions, bug: SweepBug): SessionDB {
  return openMutant(path, options, ({ store, raw }) => {
    // A held sweeper keeps the others waiting for its lock: wait as long as the store does.
    raw.setBusyTimeout(20_000);
    const marked = bug.policy === "marked-at-least-once";
    const sweep = new PolicySweep(raw, bug);
    const read = () => sweep.read();
    const claim = (rows: Row[], idempotent: boolean) => sweep.claim(rows, idempotent);
    return {
      sweepRecoverable(sweep: { idempotentTransport?: boolean } = {}) {
        const idempotent = bug.omittedIsIdempotent
          ? sweep.idempotentTransport !== false
          : sweep.idempotentTransport === true;
        // Without the guard, the rows are read before the write transaction begins.
        const taken = bug.withoutCas
          ? ((rows: Row[]) => raw.transaction(() => claim(rows, idempotent)).immediate())(read())
          : raw.transaction(() => claim(read(), idempotent)).immediate();
        return taken.map(({ id, action, fence }) => ({
          obligation: { ...store.getObligation(id)!, deliveryFence: fence },
          action,
          idempotencyKey: id,
          ...(action === "resend" && marked && bug.maybeSent !== "resend unmarked"
            ? { recoveryMarker: bug.marker ?? DEFAULT_RECOVERY_MARKER }
            : {}),
        }));
      },
    };
  });
}

/** The policy a mutant declares. */
export function declared(bug: SweepBug): DeliveryPolicy {
  return bug.declares ?? bug.policy;
}

/** A policy mutant's crash points: the reference's, none inside the replaced sweep. */
export function policyCrashPoints(): string[] {
  return mutantCrashPoints(["sweepRecoverable"]);
}
