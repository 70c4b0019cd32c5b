// The node:sqlite peer's delivery outbox, at most once on a plain transport: an obligation
// is recorded pending and owned by its process, moved to attempting (a compare-and-swap on
// its fence) before a send, and settled delivered, failed or unknown under that fence. A
// recovery sweep takes over, in one transaction, the open obligations of dead processes:
// a pending one is re-owned and sent, an attempting one (maybe sent) is resent with its id
// as the idempotency key on an idempotent transport, else settled unknown with a reason.
import type { RecoveredObligationView, StoredObligation } from "../cells/contract/target.ts";
import { type Connection, processAlive } from "./_node_sqlite_db.ts";
import { sha256Hex } from "../internal/sha256.ts";

type Row = Record<string, unknown>;

function view(row: Row): StoredObligation {
  return {
    obligationId: String(row.id),
    content: String(row.content),
    state: String(row.state),
    deliveryFence: Number(row.fence),
    lastError: row.last_error === null ? null : String(row.last_error),
  };
}

/** The id: the same session, reference and content are the same obligation. */
function obligationId(sessionId: string, messageRef: string, content: string): string {
  return sha256Hex(`${sessionId}\u0000${messageRef}\u0000${content}`).slice(0, 32);
}

/** Why the sweep settles a maybe-sent obligation instead of sending it again. */
const MAYBE_SENT =
  "maybe sent: its owner died while attempting it, and a non-idempotent transport cannot take it twice";

/** The outbox on one connection. */
export class Outbox {
  readonly #c: Connection;

  constructor(connection: Connection) {
    this.#c = connection;
  }

  #get(id: string): Row | undefined {
    return this.#c.db.prepare("SELECT * FROM obligations WHERE id = ?").get(id);
  }

  /** Records a pending obligation owned by this process; a second recording is a no-op. */
  record(o: { sessionId: string; messageRef: string; content: string }): Promise<StoredObligation> {
    const id = obligationId(o.sessionId, o.messageRef, o.content);
    return this.#c.write("record an obligation", () => {
      const existing = this.#get(id);
      if (existing) return view(existing);
      this.#c.db.prepare(
        "INSERT INTO obligations (id, session_id, message_ref, content, state, fence, owner_pid) VALUES (?, ?, ?, ?, 'pending', 0, ?)",
      ).run(id, o.sessionId, o.messageRef, o.content, Deno.pid);
      return view(this.#get(id)!);
    });
  }

  /** Pending → attempting, owned by this process, when the fence is `expectedFence`. */
  markAttempting(id: string, expectedFence: number): Promise<number | null> {
    return this.#c.write("mark an obligation attempting", () => {
      const changed = this.#c.db.prepare(
        "UPDATE obligations SET state = 'attempting', fence = fence + 1, owner_pid = ? WHERE id = ? AND state = 'pending' AND fence = ?",
      ).run(Deno.pid, id, expectedFence).changes;
      return changed === 1 ? expectedFence + 1 : null;
    });
  }

  /** Attempting → delivered, only under exactly this fence. */
  markDelivered(id: string, fence: number): Promise<boolean> {
    return this.#c.write("mark an obligation delivered", () =>
      this.#c.db.prepare(
        "UPDATE obligations SET state = 'delivered' WHERE id = ? AND state = 'attempting' AND fence = ?",
      ).run(id, fence).changes === 1);
  }

  /** Pending or attempting → `state` (failed, unknown) with the reason, under this fence. */
  settle(id: string, fence: number, state: "failed" | "unknown", reason: string): Promise<boolean> {
    return this.#c.write(`mark an obligation ${state}`, () =>
      this.#c.db.prepare(
        "UPDATE obligations SET state = ?, last_error = ?, fence = fence + 1 WHERE id = ? AND state IN ('pending', 'attempting') AND fence = ?",
      ).run(state, reason, id, fence).changes === 1);
  }

  /** Takes over the open obligations of dead processes, all in one transaction. */
  sweep(options: { idempotentTransport?: boolean }): Promise<RecoveredObligationView[]> {
    return this.#c.write("sweep the dead processes' obligations", () => {
      const open = this.#c.db.prepare(
        "SELECT * FROM obligations WHERE state IN ('pending', 'attempting') ORDER BY rowid",
      ).all();
      const taken: RecoveredObligationView[] = [];
      for (const row of open) {
        const owner = Number(row.owner_pid);
        if (owner === Deno.pid || processAlive(owner)) continue;
        const id = String(row.id);
        let action: RecoveredObligationView["action"];
        if (row.state === "pending") action = "send";
        else if (options.idempotentTransport) action = "resend";
        else action = "unknown";
        const [state, error] = action === "unknown" ? ["unknown", MAYBE_SENT] : [row.state, null];
        this.#c.db.prepare(
          "UPDATE obligations SET state = ?, last_error = coalesce(?, last_error), fence = fence + 1, owner_pid = ? WHERE id = ? AND fence = ?",
        ).run(String(state), error, Deno.pid, id, Number(row.fence));
        taken.push({ obligation: view(this.#get(id)!), action, idempotencyKey: id });
      }
      return taken;
    });
  }

  /** Every obligation, oldest first. */
  list(): Promise<StoredObligation[]> {
    return this.#c.read(
      "list the obligations",
      () => this.#c.db.prepare("SELECT * FROM obligations ORDER BY rowid").all().map(view),
    );
  }

  /** One obligation, or `undefined`. */
  get(id: string): Promise<StoredObligation | undefined> {
    return this.#c.read("read an obligation", () => {
      const row = this.#get(id);
      return row ? view(row) : undefined;
    });
  }

  /** The outbox's invariants: one line per violation. */
  problems(): string[] {
    return this.#c.db.prepare(
      "SELECT id, state FROM obligations WHERE state IN ('failed', 'unknown') AND trim(coalesce(last_error, '')) = ''",
    ).all().map((row) => `obligation ${row.id} is ${row.state} without a reason`);
  }
}
