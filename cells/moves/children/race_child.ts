// The race series' children (see _race_series.ts). An actor builds a session, then runs
// one operation bracketed by marks (the recorder stops it at a lock call inside); a racer,
// its store already open, waits for the parent's barrier, acts once on the same session
// and reports. Each writes its outcome as JSON to `out`.
import { awaitBarrier } from "../../../harness/barrier.ts";
import { childArgs, marked, openStoreFor } from "../../contract/child_runtime.ts";

/** Long enough that only the holder's liveness, never expiry, frees a lock. */
const TTL_MS = 3_600_000;
const DEADLINE_MS = 60_000;
/** Above Linux's PID_MAX_LIMIT (2^22): never a live process. */
const DEAD_PID = 4_194_305;

const [target, db, role, out, go, session] = childArgs(
  6,
  "race_child.ts <target> <db> <rewind-actor|rewind-racer|publish-actor|publish-racer> <out> <go> <session>",
);
const store = await openStoreFor(target!, db!, { busy: "thrown" });
const write = (value: unknown) => Deno.writeTextFileSync(out!, JSON.stringify(value));
const errorName = (error: unknown) => error instanceof Error ? error.name : String(error);

if (role === "rewind-actor" || role === "publish-actor") {
  await store.createSession(session!);
  for (const content of ["u0", "a1", "u2", "a3"]) {
    const role = content.startsWith("u") ? "user" : "assistant";
    await store.appendMessage(session!, { role, content });
  }
  try {
    if (role === "rewind-actor") {
      const ids = (await store.getMessages(session!)).map((m) => m.id);
      const changed = await marked(
        "rewindToMessage",
        () => store.rewindToMessage!(session!, ids[2]!, { expectedActiveIds: ids }),
      );
      write({ ok: true, changed, ids });
    } else {
      // A holder naming a dead process: another may take the lock over at any time.
      const holder = `race-actor:pid=${DEAD_PID}`;
      if (!await store.tryAcquireCompressionLock!(session!, holder, TTL_MS)) {
        throw new Error("the actor could not take the compression lock");
      }
      await marked("publishCompressionChild", () =>
        store.publishCompressionChild!({
          parentId: session!,
          childId: "race-child-actor",
          holder,
          messages: [{ role: "system", content: "summary by the actor" }],
        }));
      write({ ok: true });
    }
  } catch (error) {
    write({ ok: false, error: errorName(error) });
  }
} else {
  Deno.writeTextFileSync(`${out}.ready`, "ready");
  if (!awaitBarrier(go!, DEADLINE_MS)) throw new Error(`the racer was never released: ${go}`);
  try {
    if (role === "rewind-racer") {
      const id = await store.appendMessage(session!, { role: "user", content: "racer" });
      write({ ok: true, id });
    } else {
      // Takes the lock over, then looks: the parent still open means the actor's publish
      // had not committed; holding the lock, it never releases it.
      const holder = `race-racer:pid=${Deno.pid}`;
      const acquired = await store.tryAcquireCompressionLock!(session!, holder, TTL_MS);
      const parent = (await store.listSessions!()).find((s) => s.id === session!);
      write({ ok: true, acquired, parentOpen: parent !== undefined && parent.endedAt === null });
    }
  } catch (error) {
    write({ ok: false, error: errorName(error) });
  }
}
await store.close();
