// Cell 11's power-loss writer: rounds of two renewals, each journaled when invoked and once
// answered. A holder named without `pid=` (only expiry decides) takes the lock of `r<j>` for
// a short lease and renews it to an hour (`renew`); a stale holder takes the lock of `x<j>`
// for 1 ms and, once that lapsed (a witness lease on `w<j>` lapsed), renews it (`stale`:
// must be refused and change nothing).
// It kills itself right after its k-th acknowledged `renew` when given k.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import { childArgs, lifetimeGuard, openStoreFor } from "../../contract/child_runtime.ts";
import { answerOf, verdict } from "../../contract/typed.ts";
import { awaitLapse, takeWitness } from "../../moves/lease_witness.ts";
import { type RenewalEntry, RENEWER_HOLDERS, RENEWER_LEASE_MS } from "../_renewals.ts";

const [target, dbPath, journalPath, selfKill] = childArgs(
  3,
  "renewer.ts <target> <db> <journal> [kill itself after this many acknowledged renewals]",
);
const killAfter = selfKill === undefined ? Infinity : Number(selfKill);
const store = await openStoreFor(target!, dbPath!);
const journal = new AckWriter(journalPath!);
const write = (entry: RenewalEntry) => journal.write(entry);
const HOUR = 3_600_000;

async function acquire(session: string, holder: string, ttlMs: number): Promise<number> {
  await store.createSession(session);
  if (!await store.tryAcquireCompressionLock!(session, holder, ttlMs)) {
    throw new Error(`Cannot take the free compression lock of ${session} as ${holder}`);
  }
  return Date.now();
}

const guard = lifetimeGuard();
let renewed = 0;
for (let j = 0;; j++) {
  guard();
  const r = `r${j}`;
  const at = await acquire(r, RENEWER_HOLDERS.durable, RENEWER_LEASE_MS);
  write({ k: "inv", op: "renew", s: r, at });
  const answer = await answerOf(() =>
    store.refreshCompressionLock!(r, RENEWER_HOLDERS.durable, HOUR)
  );
  write({ k: "ack", op: "renew", s: r, at, answer, t1: Date.now() });
  if (verdict(answer) === "accepted" && ++renewed >= killAfter) killSelf();
  const x = `x${j}`;
  const lapsed = await acquire(x, RENEWER_HOLDERS.stale, 1) + 5;
  // Past the 1 ms lease as the store sees it: its witness, taken right after, lapsed.
  const witness = await takeWitness(store, { session: `w${j}`, ttlMs: 1 });
  await awaitLapse(store, witness, { what: `the 1 ms lease of ${x} to lapse` });
  write({ k: "inv", op: "stale", s: x, at: lapsed });
  const refused = await answerOf(() =>
    store.refreshCompressionLock!(x, RENEWER_HOLDERS.stale, HOUR)
  );
  write({ k: "ack", op: "stale", s: x, at: lapsed, answer: refused, t1: Date.now() });
}
