// Cell 7's settlement guards: one process settles handoffs (`handoff`) or outbox attempts
// (`outbox`) of its own next to bystanders, and checks that each settling call touched
// only what it named, only from the states it may leave, only under its fence. It
// journals every guard that did not hold, then makes one last settling call, journals
// the answer and waits to be killed with nothing after it: that call must be durable the
// instant it returned.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { childArgs, openStoreFor, waitToBeKilled } from "../../contract/child_runtime.ts";
import { readObligation } from "../../outbox_exactly_once/state.ts";
import type { StoredObligation } from "../../contract/target.ts";

const [target, dbPath, journalPath, readyPath, kind] = childArgs(
  5,
  "settle_guards.ts <target> <db> <journal> <ready> <handoff|outbox>",
);
const store = await openStoreFor(target!, dbPath!);
const journal = new AckWriter(journalPath!);
const wrong: string[] = [];
const expect = (holds: boolean, what: string) => {
  if (!holds) wrong.push(what);
};
/** Whether a settling call was refused: `false`, or a typed error (a class of its own). */
async function refused(call: () => unknown): Promise<boolean> {
  try {
    return await call() === false;
  } catch (error) {
    return error instanceof Error && error.name !== "Error";
  }
}

if (kind === "handoff") {
  const state = async (s: string) => await store.getHandoffState!(s);
  for (const s of ["A", "B", "C", "D"]) {
    await store.createSession(s);
    await store.requestHandoff!(s, "settle-guards");
    if (s !== "C" && !await store.claimHandoff!(s)) throw new Error(`Cannot claim ${s}`);
  }
  // A, B and D running (claimed by this process), C pending.
  expect(await store.completeHandoff!("A") === true, "completeHandoff(A), running and ours");
  for (const [s, want] of [["B", "running"], ["C", "pending"], ["D", "running"]] as const) {
    const now = await state(s);
    expect(now === want, `completeHandoff(A) changed bystander ${s}: ${want} -> ${now}`);
  }
  expect(await refused(() => store.failHandoff!("A", "too late")), "failHandoff(A) on completed A");
  const a = await state("A");
  expect(a === "completed", `failHandoff(A) moved completed A to ${a}`);
  expect(await store.failHandoff!("B", "guard") === true, "failHandoff(B), running");
  for (const [s, want] of [["A", "completed"], ["C", "pending"], ["D", "running"]] as const) {
    const now = await state(s);
    expect(now === want, `failHandoff(B) changed bystander ${s}: ${want} -> ${now}`);
  }
  expect(await refused(() => store.completeHandoff!("B")), "completeHandoff(B) on failed B");
  const b = await state("B");
  expect(b === "failed", `completeHandoff(B) by its former claimant moved failed B to ${b}`);
  journal.write({ wrong });
  journal.write({
    last: "failHandoff",
    session: "D",
    answer: await store.failHandoff!("D", "last"),
  });
} else if (kind === "outbox") {
  const read = (o: StoredObligation) => readObligation(store, o.obligationId);
  const describe = (o: StoredObligation | undefined) => `${o?.state} (fence ${o?.deliveryFence})`;
  await store.createSession("guards");
  const record = (ref: string) =>
    store.recordObligation!({ sessionId: "guards", messageRef: ref, content: `guard ${ref}` });
  const [o1, o2, o3] = [await record("o1"), await record("o2"), await record("o3")];
  const f1 = await store.markAttempting!(o1.obligationId, o1.deliveryFence);
  const f2 = await store.markAttempting!(o2.obligationId, o2.deliveryFence);
  if (f1 === null || f2 === null) throw new Error("Cannot attempt fresh obligations");
  // A stale fence (the one before the attempt) must not settle the attempt.
  expect(
    await refused(() => store.markUnknown!(o1.obligationId, o1.deliveryFence, "stale")),
    `markUnknown(o1) with the stale fence ${o1.deliveryFence}`,
  );
  let now = await read(o1);
  expect(now?.state === "attempting", `markUnknown(o1, stale fence) moved o1 to ${describe(now)}`);
  now = await read(o3);
  expect(
    now?.state === "pending",
    `markUnknown(o1, stale fence) changed bystander o3 to ${describe(now)}`,
  );
  expect(await store.markUnknown!(o1.obligationId, f1, "guard") === true, "markUnknown(o1, f1)");
  now = await read(o2);
  expect(now?.state === "attempting", `markUnknown(o1) changed bystander o2 to ${describe(now)}`);
  now = await read(o3);
  expect(now?.state === "pending", `markUnknown(o1) changed bystander o3 to ${describe(now)}`);
  const f3 = now?.state === "pending"
    ? await store.markAttempting!(o3.obligationId, o3.deliveryFence)
    : null;
  if (f3 !== null && await store.markDelivered!(o3.obligationId, f3)) {
    expect(
      await refused(() => store.markUnknown!(o3.obligationId, f3, "after delivery")),
      "markUnknown(o3) on delivered o3",
    );
    now = await read(o3);
    expect(now?.state === "delivered", `markUnknown(o3) moved delivered o3 to ${describe(now)}`);
  } else {
    expect(false, `o3 could not be attempted and delivered: it is ${describe(await read(o3))}`);
  }
  journal.write({ wrong });
  journal.write({
    last: "markUnknown",
    obligationId: o2.obligationId,
    answer: await store.markUnknown!(o2.obligationId, f2, "last"),
  });
} else {
  console.error(`Invalid kind "${kind}": use handoff or outbox`);
  Deno.exit(2);
}
journal.close();
waitToBeKilled(readyPath!);
