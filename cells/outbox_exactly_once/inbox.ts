// Cell 5's fake transport: a durable inbox file that records every effect it receives,
// one JSON line per arrival, appended in one write and fsynced before the send returns. A
// copy sent with a recovery marker carries it in front of the content, as a platform
// would show it, and names it apart so that marked and unmarked copies can be counted.

/** App-level crash point of the sender: recorded (acknowledged), not yet attempted. */
export const SENDER_AFTER_RECORD = "sender:afterRecord";
/** App-level crash point of the sender: marked attempting (acknowledged), not yet sent. */
export const SENDER_AFTER_ATTEMPTING = "sender:afterAttempting";
/** App-level crash point of the sender: sent, not yet marked delivered. */
export const SENDER_AFTER_SEND = "sender:afterSend";
/** App-level crash point of a recoverer: (re)sent during a recovery, not yet marked delivered. */
export const RECOVERER_AFTER_SEND = "recoverer:afterSend";

/** One arrival at the receiver. */
export interface Arrival {
  /** The idempotency key the sender passed (the obligation id). */
  key: string;
  /** The obligation delivered. */
  obligationId: string;
  /** The payload as the platform got it: the marker (if any), then the content. */
  content: string;
  /** The recovery marker sent in front of the content, or `null` for a plain copy. */
  marker: string | null;
  /** The sending process. */
  pid: number;
}

/** What a sender hands the transport: the obligation's content and, on a resend, a marker. */
export interface Outgoing {
  key: string;
  obligationId: string;
  content: string;
  marker?: string | null | undefined;
}

/** Sends one effect: appends it to the inbox and syncs it to disk. */
export function send(inbox: string, outgoing: Outgoing): void {
  const marker = outgoing.marker ? outgoing.marker : null;
  const arrival: Arrival = {
    key: outgoing.key,
    obligationId: outgoing.obligationId,
    content: `${marker ?? ""}${outgoing.content}`,
    marker,
    pid: Deno.pid,
  };
  const bytes = new TextEncoder().encode(JSON.stringify(arrival) + "\n");
  const file = Deno.openSync(inbox, { append: true, create: true });
  try {
    let written = 0;
    while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
    file.syncSync();
  } finally {
    file.close();
  }
}

/** Every arrival (a torn final line, from a kill inside a send, is dropped). */
export function readInbox(inbox: string): Arrival[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(inbox);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  const lines = text.split("\n");
  lines.pop();
  return lines.map((line) => JSON.parse(line) as Arrival);
}

/**
 * The effects each obligation had at the receiver: every arrival with the
 * non-idempotent transport, distinct keys with the idempotent one.
 */
export function effectsPerObligation(
  arrivals: readonly Arrival[],
  idempotent: boolean,
): Map<string, number> {
  const out = new Map<string, number>();
  const seen = new Set<string>();
  for (const arrival of arrivals) {
    if (idempotent) {
      const key = `${arrival.obligationId}\u0000${arrival.key}`;
      if (seen.has(key)) continue;
      seen.add(key);
    }
    out.set(arrival.obligationId, (out.get(arrival.obligationId) ?? 0) + 1);
  }
  return out;
}
