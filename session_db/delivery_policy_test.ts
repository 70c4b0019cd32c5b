import assert from "node:assert/strict";
import { join } from "node:path";
import { Database } from "./sqlite/database.ts";
import { SessionDB } from "./session_db.ts";
import { DEFAULT_RECOVERY_MARKER, deliveryOf } from "./delivery_policy.ts";
import { InvalidArgumentError } from "./errors.ts";
import type { SessionDBOptions } from "./types.ts";
import { deadPid, tempDir } from "./_test_helpers.ts";

/** A store whose obligations `pending` and `attempting` belong to a dead process. */
async function orphans(options: SessionDBOptions) {
  const dir = tempDir();
  const path = join(dir.path, "s.db");
  const db = SessionDB.open(path, options);
  db.createSession("s");
  const record = (ref: string) =>
    db.recordObligation({ sessionId: "s", messageRef: ref, content: `say ${ref}` }).obligationId;
  const pending = record("pending");
  const attempting = record("attempting");
  assert.equal(db.markAttempting(attempting, 0), 1);
  const raw = new Database(path);
  raw.exec("UPDATE outbox SET owner_pid = ?", await deadPid());
  raw.close();
  return {
    db,
    pending,
    attempting,
    [Symbol.dispose]() {
      db.close();
      dir[Symbol.dispose]();
    },
  };
}

Deno.test("at-most-once (the default) settles a maybe-sent obligation unknown, unmarked", async () => {
  using store = await orphans({});
  assert.equal(store.db.deliveryPolicy, "at-most-once");
  const taken = store.db.sweepRecoverable();
  assert.deepEqual(
    taken.map((t) => [t.obligation.obligationId, t.action, t.recoveryMarker]).sort(),
    [[store.pending, "send", undefined], [store.attempting, "unknown", undefined]].sort(),
  );
  assert.equal(store.db.getObligation(store.attempting)!.state, "unknown");
});

Deno.test("marked-at-least-once resends a maybe-sent obligation with its marker", async () => {
  using store = await orphans({ deliveryPolicy: "marked-at-least-once" });
  assert.equal(store.db.deliveryPolicy, "marked-at-least-once");
  const taken = store.db.sweepRecoverable();
  const resend = taken.find((t) => t.obligation.obligationId === store.attempting)!;
  assert.equal(resend.action, "resend");
  assert.equal(resend.recoveryMarker, DEFAULT_RECOVERY_MARKER);
  assert.equal(resend.obligation.state, "attempting");
  assert.equal(resend.obligation.deliveryFence, 2); // taken over: the dead owner's fence is stale
  assert.equal(store.db.markDelivered(store.attempting, 1), false);
  assert.equal(store.db.markDelivered(store.attempting, 2), true);
  // A never-attempted one is sent plainly: nothing of it can have reached the platform.
  const send = taken.find((t) => t.obligation.obligationId === store.pending)!;
  assert.equal(send.action, "send");
  assert.equal(send.recoveryMarker, undefined);
  assert.deepEqual(store.db.sweepRecoverable(), []);
  assert.deepEqual(store.db.checkInvariants(), []);
});

Deno.test("marked-at-least-once keeps the marker on an idempotent transport, with a custom text", async () => {
  using store = await orphans({
    deliveryPolicy: "marked-at-least-once",
    recoveryMarker: "(again) ",
  });
  const [resend] = store.db.sweepRecoverable({ idempotentTransport: true })
    .filter((t) => t.action === "resend");
  assert.equal(resend?.recoveryMarker, "(again) ");
  assert.equal(resend?.idempotencyKey, store.attempting);
});

Deno.test("at-most-once resends under the key on an idempotent transport, without a marker", async () => {
  using store = await orphans({});
  const [resend] = store.db.sweepRecoverable({ idempotentTransport: true })
    .filter((t) => t.action === "resend");
  assert.equal(resend?.obligation.obligationId, store.attempting);
  assert.equal(resend?.recoveryMarker, undefined);
});

Deno.test("a bad delivery policy or marker is refused at open, naming the fix", () => {
  assert.throws(
    () => deliveryOf("exactly-once", undefined),
    (error: Error) =>
      error instanceof InvalidArgumentError &&
      error.message ===
        'Invalid delivery policy "exactly-once": use one of at-most-once, marked-at-least-once',
  );
  assert.throws(() => deliveryOf(undefined, "  "), /Invalid recovery marker: it must be a string/);
  assert.deepEqual(deliveryOf(undefined, undefined), {
    policy: "at-most-once",
    marker: DEFAULT_RECOVERY_MARKER,
  });
  using dir = tempDir();
  assert.throws(
    () =>
      SessionDB.open(join(dir.path, "s.db"), {
        deliveryPolicy: "sometimes" as "at-most-once",
      }),
    InvalidArgumentError,
  );
});
