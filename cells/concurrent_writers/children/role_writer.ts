// Cell 6's child: one role of several processes writing one file. It journals each
// operation before it invokes it (`inv`) and after the store returned (`ack`), or the
// typed busy refusal (`refused`), and `done` once its whole plan is through. Any other
// error is journaled and ends the process with code 1.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { awaitBarrier, signalReady } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { dirname } from "../../../internal/path.ts";
import { childArgs, lifetimeGuard, openStoreFor } from "../../contract/child_runtime.ts";
import type { Store } from "../../contract/target.ts";
import { BUSY_REFUSAL, retriedWhileBusy } from "../../contract/typed.ts";
import { isBusyError } from "../../engine/diagnoses.ts";

const [target, dbPath, journalPath, role, total, start, barrier, hold = "-"] = childArgs(
  7,
  "role_writer.ts <target> <db> <journal> <gateway|cli|cron> <total> <start> <barrier> [<seq>:<hold barrier>]",
);
// The kill anchor: before operation `holdSeq` the role says so (`<hold barrier>.held`)
// and waits to be released, or killed there when no timed kill landed.
const holdSeq = hold === "-" ? -1 : Number(hold.slice(0, hold.indexOf(":")));
const holdBarrier = hold.slice(hold.indexOf(":") + 1);
/** Sessions the gateway spreads its appends over (plus the shared long one). */
const GATEWAY_SESSIONS = 6;
/** How long the setup (open, sessions) keeps trying through typed busy refusals. */
const SETUP_DEADLINE_MS = 60_000;

/**
 * Runs a setup step, trying again after a typed busy refusal: a store may refuse under
 * contention after its deadline (a restarted role sets up while the others write), and
 * the setup is not judged; any other error ends the role.
 */
const settled = <T>(call: () => T | Promise<T>) => retriedWhileBusy(call, SETUP_DEADLINE_MS);

const journal = new AckWriter(journalPath!);
/** Journals an error other than a typed busy refusal and ends the role with code 1. */
function failed(error: unknown, doing = ""): never {
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  journal.write({ k: "error", name, message, ...(isBusyError(error) ? { busy: true } : {}) });
  console.error(`role ${role} pid ${Deno.pid}: ${doing}${name}: ${message}`);
  Deno.exit(1);
}

// This writer judges the busy refusal itself: the store hands it over as it comes.
const opened = () => openStoreFor(target!, dbPath!, { busy: "thrown" });
const store: Store = await settled(opened).catch((error) =>
  failed(error, "cannot open the store: ")
);
const guard = lifetimeGuard();
const canRecord = typeof store.recordObligation === "function";
const canRotate = typeof store.tryAcquireCompressionLock === "function" &&
  typeof store.publishCompressionChild === "function" &&
  typeof store.releaseCompressionLock === "function";
const holder = `cell6-cron:pid=${Deno.pid}`;

function sessionOf(seq: number): string {
  if (role === "cli") return "long";
  if (role === "gateway") return seq % 3 === 0 ? "long" : `gw-${seq % GATEWAY_SESSIONS}`;
  return "cron";
}

type Op = "append" | "obligation" | "rotate";
function opOf(seq: number): Op {
  if (role !== "cron") return "append";
  if (seq % 4 === 3 && canRotate) return "rotate";
  return canRecord && seq % 2 === 1 ? "obligation" : "append";
}

async function run(seq: number, op: Op): Promise<Record<string, unknown>> {
  const content = `${role}:${seq}`;
  if (op === "append") {
    const session = sessionOf(seq);
    const id = await store.appendMessage(session, { role: "user", content });
    return { session, content, id };
  }
  if (op === "obligation") {
    const stored = await store.recordObligation!({
      sessionId: "cron",
      messageRef: `ref-${seq}`,
      content,
    });
    return { id: stored?.obligationId, content };
  }
  const parentId = `cron-p-${seq}`;
  const childId = `cron-c-${seq}`;
  await store.createSession(parentId);
  await store.appendMessage(parentId, { role: "user", content });
  if (!await store.tryAcquireCompressionLock!(parentId, holder, 60_000)) {
    throw new Error(`Cannot take the compression lock of ${parentId}: nobody else holds it`);
  }
  await store.publishCompressionChild!({
    parentId,
    childId,
    holder,
    messages: [{ role: "system", content: `summary ${seq}` }],
  });
  await store.releaseCompressionLock!(parentId, holder);
  return { parentId, childId, content };
}

/**
 * Reads the session every appending role shares and journals the ids it holds, with the
 * times around the read: it must hold every append another process acknowledged before it
 * (a store answering from a cache of its own process does not). A busy refusal reads nothing.
 */
async function readLong(): Promise<void> {
  const t0 = Date.now();
  try {
    const ids = (await store.getMessages("long")).map((message) => message.id);
    journal.write({ k: "read", session: "long", ids, t0, t1: Date.now() });
  } catch (error) {
    if ((error instanceof Error ? error.name : typeof error) !== BUSY_REFUSAL) throw error;
  }
}

try {
  // The sessions exist before the start, so that every role's first operation after it
  // is one of its plan (the cell may hold the write lock across the start).
  for (
    const id of [
      "long",
      "cron",
      ...Array.from({ length: GATEWAY_SESSIONS }, (_, i) => `gw-${i}`),
    ]
  ) {
    await settled(() => store.createSession(id));
  }
  // Every role starts writing at once, so that they contend from the first operation.
  signalReady(dirname(journalPath!), `${role}-${Deno.pid}`);
  if (!awaitBarrier(barrier!, 60_000)) {
    console.error(`role ${role}: the start barrier was not released within 60 s`);
    Deno.exit(TIMED_OUT);
  }
  for (let seq = Number(start); seq < Number(total); seq++) {
    guard();
    if (seq === holdSeq) {
      Deno.writeTextFileSync(`${holdBarrier}.held`, `${Deno.pid}\n`);
      if (!awaitBarrier(holdBarrier, 60_000)) {
        console.error(
          `role ${role}: its hold before operation ${seq} was not released within 60 s`,
        );
        Deno.exit(TIMED_OUT);
      }
    }
    const op = opOf(seq);
    journal.write({ k: "inv", seq, op, t: Date.now() });
    const t0 = Date.now();
    const began = performance.now();
    try {
      const result = await run(seq, op);
      const ms = performance.now() - began;
      journal.write({ k: "ack", seq, op, ...result, t0, t1: Date.now(), ms });
      if (role !== "cron" && seq % 2 === 1) await readLong();
    } catch (error) {
      const ms = performance.now() - began;
      const name = error instanceof Error ? error.name : typeof error;
      if (name !== BUSY_REFUSAL) throw error;
      journal.write({ k: "refused", seq, op, name, ms, content: `${role}:${seq}` });
    }
  }
  await store.close();
  journal.write({ k: "done", total: Number(total) });
} catch (error) {
  failed(error);
}
