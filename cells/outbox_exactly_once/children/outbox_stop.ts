// Cell 5's stops inside its guarded writes (see ../stops.ts), one role per run:
// `dead` records the dead owner's obligations (one pending, one attempting) and exits;
// `holder` records obligations of its own (two pending, two attempting) and waits to be
// killed while the actor is stopped; `actor` makes the scenario's guarded write bracketed by
// marks (the recorder stops it before a lock call inside); `owner` (the competing process,
// its store open) is released during the stop, looks whether the actor's write has landed,
// makes the competing move, and acts again once the actor finished. The actor and the
// owner stay alive until the parent lets them go, so what they took stays a live
// process's. Each writes its outcome as JSON to `out` (`<out>.took` for the owner's move).
import { awaitBarrier } from "../../../harness/barrier.ts";
import {
  CHILD_LIFETIME_MS,
  childArgs,
  marked,
  openStoreFor,
  waitToBeKilled,
} from "../../contract/child_runtime.ts";
import { readObligation } from "../state.ts";
import { type Answer, answerOf } from "../../contract/typed.ts";
import type { RecoveredObligationView } from "../../contract/target.ts";

const [target, db, scenario, role, out, go, shared, idempotentArg] = childArgs(
  8,
  "outbox_stop.ts <target> <db> <sweep|attempt|delivered> <dead|holder|actor|owner> <out> <go> <shared> <idempotent 0|1>",
);
const store = await openStoreFor(target!, db!, { busy: "thrown" });
const idempotent = idempotentArg === "1";
const SESSION = "cell5-stop";
const write = (path: string, value: unknown) =>
  Deno.writeTextFileSync(path, JSON.stringify(value) + "\n");
const wait = (path: string, what: string) => {
  if (!awaitBarrier(path, CHILD_LIFETIME_MS)) throw new Error(`outbox_stop ${role}: no ${what}`);
};
interface Held {
  id: string;
  fence: number;
}
const dead = () =>
  JSON.parse(Deno.readTextFileSync(shared!)) as { pending: Held; attempting: Held };
const record = async (ref: string) => {
  const o = await store.recordObligation!({ sessionId: SESSION, messageRef: ref, content: ref });
  return { id: o.obligationId, fence: o.deliveryFence };
};
const attempt = async (ref: string) => {
  const o = await record(ref);
  const fence = await store.markAttempting!(o.id, o.fence);
  if (fence === null) throw new Error(`outbox_stop ${role}: markAttempting lost on ${o.id}`);
  return { id: o.id, fence };
};
const sweep = async () =>
  (await store.sweepRecoverable!({ idempotentTransport: idempotent })).map((
    r: RecoveredObligationView,
  ) => ({ id: r.obligation.obligationId, action: r.action, fence: r.obligation.deliveryFence }));
const stateOf = async (id: string) => (await readObligation(store, id))?.state;

type Maybe<T> = T | Promise<T>;
interface Scenario {
  /** The actor's guarded write (stopped inside). */
  write(): Maybe<unknown>;
  /** The owner, during the stop: whether the actor's write has landed. */
  landed(): Maybe<boolean>;
  /** The owner's competing move, during the stop: whether it took anything. */
  move(): Promise<{ took: boolean; answer: Answer }>;
  /** The owner, once the actor finished (`null`: nothing to do). */
  act?(moved: Answer): Maybe<unknown>;
}

const SCENARIOS: Record<string, Scenario> = {
  // A sweep of the dead owner's obligations while another sweep takes them; the holder dies
  // during the stop, so its obligations become the sweeps' too. The owner sweeps again last.
  sweep: {
    write: sweep,
    landed: () => false, // a sweep that landed leaves the owner nothing of the dead owner's
    async move() {
      const answer = await answerOf(sweep);
      return { took: !answer.threw && (answer.value as unknown[]).length > 0, answer };
    },
    act: sweep,
  },
  // An attempt of a pending obligation another process settled meanwhile (it gave up on it).
  attempt: {
    write: () => store.markAttempting!(dead().pending.id, dead().pending.fence),
    landed: async () => await stateOf(dead().pending.id) === "attempting",
    async move() {
      const { id, fence } = dead().pending;
      const settle = store.markUnknown ?? store.markFailed;
      const answer = await answerOf(() =>
        settle!.call(store, id, fence, "the application gave up on it before it was attempted")
      );
      return { took: !answer.threw && answer.value === true, answer };
    },
  },
  // The dead sender's send booked under its fence after a recovery took the attempt over
  // (a resend under a new fence); the new owner then books its own resend.
  delivered: {
    write: () => store.markDelivered!(dead().attempting.id, dead().attempting.fence),
    landed: async () => await stateOf(dead().attempting.id) === "delivered",
    async move() {
      const answer = await answerOf(sweep);
      const taken = answer.threw ? [] : answer.value as { id: string; action: string }[];
      const took = taken.some((c) => c.id === dead().attempting.id && c.action === "resend");
      return { took, answer };
    },
    act(moved) {
      const taken = moved.threw ? [] : moved.value as { id: string; fence: number }[];
      const mine = taken.find((c) => c.id === dead().attempting.id);
      return mine ? store.markDelivered!(mine.id, mine.fence) : null;
    },
  },
};

const plan = SCENARIOS[scenario!];
if (!plan) {
  throw new Error(`Unknown scenario "${scenario}": use ${Object.keys(SCENARIOS).join(", ")}`);
}
if (role === "dead") {
  await store.createSession(SESSION);
  write(shared!, { pending: await record("dead pending"), attempting: await attempt("dead sent") });
} else if (role === "holder") {
  for (const ref of ["live pending 0", "live pending 1"]) await record(ref);
  for (const ref of ["live attempting 0", "live attempting 1"]) await attempt(ref);
  waitToBeKilled(`${out}.ready`);
} else if (role === "actor") {
  const answer = await answerOf(() => marked(`outbox-${scenario}`, plan.write));
  write(out!, answer);
  wait(`${go}.done`, "go to end");
} else {
  Deno.writeTextFileSync(`${out}.ready`, "ready");
  wait(go!, "go to move");
  // Bracketed by marks: the recorder notes a lock call refused by the actor's lock.
  const { landed, moved } = await marked("move", async () => {
    const landed = await plan.landed();
    return { landed, moved: await plan.move() };
  });
  write(`${out}.took`, { took: moved.took, landed, moved: moved.answer });
  wait(`${go}.act`, "go to act");
  const acted = plan.act ? await answerOf(() => plan.act!(moved.answer)) : null;
  write(out!, { took: moved.took, landed, moved: moved.answer, acted });
  wait(`${go}.done`, "go to end");
}
if (role !== "holder") await store.close();
