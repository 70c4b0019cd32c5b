// Cell 11's child: a compression-lock holder, in one of five modes.
// - `stale`: takes the lock for a short lease, says so, beats a heartbeat while it waits (the
//   parent SIGSTOPs it past its lease and lets another take over), then renews and writes
//   what the store answered.
// - `durable`: takes the locks of a session and of one beside it for a short lease, renews
//   the first to a long one, journals the answer and waits to be killed.
// - `resume`: as the durable holder, on the recovered file, publishes the rotation and
//   releases, journals the answers and waits to be killed.
// - `actor`: takes the lock for a short lease and renews it, the renewal bracketed by marks
//   (the stop series stops it inside).
// - `taker`: its store open, waits for the go, lets the actor's lease lapse (a witness lease
//   taken after it lapsed), takes the lock over; once the actor finished, publishes and
//   releases as the holder it now is.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { awaitBarrier } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { exists } from "../../../internal/fs.ts";
import {
  CHILD_LIFETIME_MS,
  childArgs,
  marked,
  openStoreFor,
  waitToBeKilled,
} from "../../contract/child_runtime.ts";
import { answerOf, verdict } from "../../contract/typed.ts";
import { awaitLapse, takeWitness } from "../../moves/lease_witness.ts";

const [target, db, mode, prefix, session, ms] = childArgs(
  6,
  "holder.ts <target> <db> <stale|durable|resume|actor|taker> <file prefix> <session> <lease ms>",
);
const store = await openStoreFor(target!, db!, { busy: "thrown" });
const S = session!;
const leaseMs = Number(ms);
const file = (name: string) => `${prefix}.${name}`;
const write = (name: string, value: unknown) =>
  Deno.writeTextFileSync(file(name), JSON.stringify(value) + "\n");
/** A renewal far longer than any wait of the cell. */
const LONG_MS = 3_600_000;
/** The holders named without `pid=`: only the lease's expiry decides. */
const DURABLE = "cell11-durable";
const ACTOR = "cell11-actor";
const STALE = "cell11-stale";

async function acquire(sessionId: string, holder: string, ttlMs: number): Promise<void> {
  if (!await store.tryAcquireCompressionLock!(sessionId, holder, ttlMs)) {
    throw new Error(`Cannot take the free compression lock of ${sessionId} as ${holder}`);
  }
}

/** Waits (bounded) with a heartbeat every few ms, so the parent can see SIGSTOP froze it. */
async function beatUntilGo(): Promise<void> {
  const end = performance.now() + CHILD_LIFETIME_MS;
  for (let beat = 1; !exists(file("go")); beat++) {
    if (performance.now() > end) Deno.exit(TIMED_OUT);
    Deno.writeTextFileSync(file("beat"), `${beat}\n`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function stale(): Promise<void> {
  await acquire(S, STALE, leaseMs);
  write("acquired", { at: Date.now() });
  await beatUntilGo();
  write("result", await answerOf(() => store.refreshCompressionLock!(S, STALE, LONG_MS)));
  await store.close();
}

async function durable(): Promise<void> {
  const before = Date.now();
  await acquire(S, DURABLE, leaseMs);
  await acquire(`${S}-beside`, DURABLE, leaseMs);
  const acquiredAt = Date.now();
  const answer = await answerOf(() => store.refreshCompressionLock!(S, DURABLE, LONG_MS));
  const acks = new AckWriter(file("jsonl"));
  acks.write({ before, acquiredAt, answer });
  acks.close();
  waitToBeKilled(file("ready"));
}

async function resume(): Promise<void> {
  const acks = new AckWriter(file("jsonl"));
  const published = await answerOf(async () =>
    await store.publishCompressionChild!({
      parentId: S,
      childId: `${S}-next`,
      holder: DURABLE,
      messages: [{ role: "system", content: "renewed summary" }],
    }) !== undefined
  );
  acks.write({ published });
  const released = await answerOf(() => store.releaseCompressionLock!(S, DURABLE));
  acks.write({ released });
  acks.close();
  waitToBeKilled(file("ready"));
}

async function actor(): Promise<void> {
  await acquire(S, ACTOR, leaseMs);
  write("acquired", { at: Date.now() });
  const answer = await answerOf(() =>
    marked("refreshCompressionLock", () => store.refreshCompressionLock!(S, ACTOR, LONG_MS))
  );
  write("result", answer);
  await store.close();
}

async function taker(): Promise<void> {
  const holder = `cell11-new:pid=${Deno.pid}`;
  const witnessed = `${S}-witness`;
  await store.createSession(witnessed);
  write("ready", true);
  if (!awaitBarrier(file("go"), CHILD_LIFETIME_MS)) throw new Error("the taker was never released");
  // The actor's lease lapses while it is stopped, as the store sees it: a witness taken
  // after the actor took its lease, for as long, lapsed. An actor stopped holding a lock on
  // the file may keep the witness from being taken: then nothing moved during this stop.
  const lapsed = await takeWitness(store, { session: witnessed, ttlMs: leaseMs, created: true })
    .then((witness) => awaitLapse(store, witness, { what: "the actor's lease to lapse" }))
    .then(() => true, () => false);
  const took = lapsed
    ? verdict(await answerOf(() => store.tryAcquireCompressionLock!(S, holder, LONG_MS)))
    : "refused";
  write("took", { took: took === "accepted" });
  if (!awaitBarrier(file("go.act"), CHILD_LIFETIME_MS)) {
    throw new Error("the taker got no go to act");
  }
  const published = await answerOf(async () =>
    await store.publishCompressionChild!({
      parentId: S,
      childId: "child-new",
      holder,
      messages: [{ role: "system", content: "child-new summary" }],
    }) !== undefined
  );
  const released = await answerOf(() => store.releaseCompressionLock!(S, holder));
  write("owner", { took: took === "accepted", published, released });
  await store.close();
}

const MODES: Record<string, () => Promise<void>> = { stale, durable, resume, actor, taker };
const run = MODES[mode!];
if (!run) throw new Error(`Unknown mode "${mode}": use ${Object.keys(MODES).join(", ")}`);
await run();
