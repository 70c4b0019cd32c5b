// The delivery outbox: the operations behind SessionDB's obligation methods.
import { crashPoint } from "./crash_points.ts";
import { processAlive } from "./process.ts";
import { type Connection, now } from "./_connection.ts";
import { type ObligationRow, toObligation } from "./_rows.ts";
import { checkSessionId, checkText } from "./_validate.ts";
import { obligationId } from "./obligation_id.ts";
import type { Obligation, ObligationState, RecoveredObligation, SweepOptions } from "./types.ts";
import type { Delivery } from "./delivery_policy.ts";

export function recordObligation(
  conn: Connection,
  obligation: { sessionId: string; messageRef: string; content: string },
): Obligation {
  const { sessionId, messageRef, content } = obligation;
  checkSessionId(sessionId);
  checkText(messageRef, "message reference");
  checkText(content, "obligation content");
  const id = obligationId(sessionId, messageRef, content);
  conn.write("recordObligation", () => {
    conn.requireSession(sessionId);
    const t = now();
    conn.stmt(
      `INSERT OR IGNORE INTO outbox (obligation_id, session_id, message_ref, content, state,
         owner_pid, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`,
    ).run(id, sessionId, messageRef, content, Deno.pid, t, t);
    crashPoint("recordObligation:afterInsert");
  });
  crashPoint("recordObligation:afterCommit");
  return getObligation(conn, id)!;
}

export function markAttempting(conn: Connection, id: string, expectedFence: number): number | null {
  const fence = conn.write("markAttempting", () => {
    const changed = conn.stmt(
      `UPDATE outbox SET state = 'attempting', attempts = attempts + 1,
         delivery_fence = delivery_fence + 1, owner_pid = ?, updated_at = ?
       WHERE obligation_id = ? AND state = 'pending' AND delivery_fence = ?`,
    ).run(Deno.pid, now(), id, expectedFence);
    crashPoint("markAttempting:afterUpdate");
    return changed === 1 ? expectedFence + 1 : null;
  });
  crashPoint("markAttempting:afterCommit");
  return fence;
}

export function markDelivered(conn: Connection, id: string, fence: number): boolean {
  const done = conn.write("markDelivered", () => {
    const changed = conn.stmt(
      `UPDATE outbox SET state = 'delivered', updated_at = ?, last_error = NULL
       WHERE obligation_id = ? AND state = 'attempting' AND delivery_fence = ?`,
    ).run(now(), id, fence);
    crashPoint("markDelivered:afterUpdate");
    return changed === 1;
  });
  crashPoint("markDelivered:afterCommit");
  return done;
}

/** Which attempt of an obligation a terminal mark settles, and why. */
export type Settlement = { fence: number; reason: string };

export function markFailed(conn: Connection, id: string, settlement: Settlement): boolean {
  const done = terminal(conn, "failed", { id, ...settlement });
  crashPoint("markFailed:afterCommit");
  return done;
}

export function markUnknown(conn: Connection, id: string, settlement: Settlement): boolean {
  const done = terminal(conn, "unknown", { id, ...settlement });
  crashPoint("markUnknown:afterCommit");
  return done;
}

export function sweepRecoverable(
  conn: Connection,
  options: SweepOptions,
  delivery: Delivery,
): RecoveredObligation[] {
  // A maybe-sent obligation is resent when a duplicate is harmless (deduplicated) or
  // visible (marked); otherwise it is settled unknown.
  const resend = options.idempotentTransport === true ||
    delivery.policy === "marked-at-least-once";
  const marked = delivery.policy === "marked-at-least-once";
  const taken = conn.write("sweepRecoverable", () => {
    // Each owner is judged alive or dead once per sweep: an owner whose exit completes
    // while the sweep reads its rows is taken whole or not at all, never in part.
    const liveness = new Map<number, boolean>();
    const alive = (pid: number) => {
      if (!liveness.has(pid)) liveness.set(pid, pid === Deno.pid || processAlive(pid));
      return liveness.get(pid)!;
    };
    const rows = conn.stmt(
      `SELECT obligation_id, state, delivery_fence, owner_pid FROM outbox
       WHERE state IN ('pending', 'attempting') ORDER BY created_at, obligation_id`,
    ).all<{ obligation_id: string; state: string; delivery_fence: number; owner_pid: number }>();
    const out: { id: string; action: RecoveredObligation["action"] }[] = [];
    const t = now();
    for (const row of rows) {
      if (alive(row.owner_pid)) continue;
      if (row.state === "pending") {
        conn.stmt(
          `UPDATE outbox SET owner_pid = ?, updated_at = ?
           WHERE obligation_id = ? AND state = 'pending' AND delivery_fence = ?`,
        ).run(Deno.pid, t, row.obligation_id, row.delivery_fence);
        out.push({ id: row.obligation_id, action: "send" });
      } else if (resend) {
        conn.stmt(
          `UPDATE outbox SET owner_pid = ?, updated_at = ?, attempts = attempts + 1,
             delivery_fence = delivery_fence + 1
           WHERE obligation_id = ? AND state = 'attempting' AND delivery_fence = ?`,
        ).run(Deno.pid, t, row.obligation_id, row.delivery_fence);
        out.push({ id: row.obligation_id, action: "resend" });
      } else {
        conn.stmt(
          `UPDATE outbox SET state = 'unknown', owner_pid = ?, updated_at = ?, last_error = ?
           WHERE obligation_id = ? AND state = 'attempting' AND delivery_fence = ?`,
        ).run(
          Deno.pid,
          t,
          `owner pid ${row.owner_pid} died after marking it attempting; it may have been sent and the transport has no idempotency key, so it is not resent`,
          row.obligation_id,
          row.delivery_fence,
        );
        out.push({ id: row.obligation_id, action: "unknown" });
      }
      crashPoint("sweepRecoverable:afterClaim");
    }
    return out;
  });
  crashPoint("sweepRecoverable:afterCommit");
  return taken.map(({ id, action }) => ({
    obligation: getObligation(conn, id)!,
    action,
    idempotencyKey: id,
    ...(marked && action === "resend" ? { recoveryMarker: delivery.marker } : {}),
  }));
}

export function getObligation(conn: Connection, id: string): Obligation | undefined {
  const row = conn.read(
    "read an obligation",
    () => conn.stmt("SELECT * FROM outbox WHERE obligation_id = ?").get<ObligationRow>(id),
  );
  return row ? toObligation(row) : undefined;
}

export function listObligations(
  conn: Connection,
  filter: { sessionId?: string; state?: ObligationState },
): Obligation[] {
  return conn.read("list obligations", () =>
    conn.stmt(
      `SELECT * FROM outbox WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR state = ?2)
       ORDER BY created_at, obligation_id`,
    ).all<ObligationRow>(filter.sessionId ?? null, filter.state ?? null)).map(toObligation);
}

function terminal(
  conn: Connection,
  state: "failed" | "unknown",
  settlement: Settlement & { id: string },
): boolean {
  const { id, fence, reason } = settlement;
  return conn.write(state === "failed" ? "markFailed" : "markUnknown", () =>
    conn.stmt(
      `UPDATE outbox SET state = ?, last_error = ?, updated_at = ?
       WHERE obligation_id = ? AND state IN ('pending', 'attempting') AND delivery_fence = ?`,
    ).run(state, reason, now(), id, fence) === 1);
}
