// F3 and F4's store processes, run under the recorder (each with its own log):
//   long   opens the store once and appends to session `long` until the stop file
//          appears (its ready file says it is open and has acknowledged one append);
//   short  opens, appends two messages to session `short` and closes, `rounds` times;
//   read   (a fresh process, unrecorded) prints every session's contents as JSON.
// Every acknowledged append is a line of the acks file, written after it returned. An error
// a store call throws ends the process with exit 1 and one JSON line on stderr, {"threw":
// {name, message}}, so that the judge can tell a typed refusal from any other error.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { exists } from "../../../internal/fs.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { CHILD_LIFETIME_MS, childArgs, openStoreFor } from "../../contract/child_runtime.ts";
import { printReport } from "../../../internal/report_line.ts";

const [target, db, acksPath, role, ready, stop, rounds] = childArgs(
  7,
  "hazard_store.ts <target> <db> <acks> <long|short|read> <ready> <stop> <rounds>",
);
const end = performance.now() + CHILD_LIFETIME_MS;
const pace = new Int32Array(new SharedArrayBuffer(4));

async function appendAcked(store: Awaited<ReturnType<typeof openStoreFor>>, session: string) {
  const content = `${session}-${crypto.randomUUID()}`;
  const id = await store.appendMessage(session, { role: "user", content });
  acks.write({ session, id, content });
}

const acks = new AckWriter(acksPath!);
try {
  await run();
} catch (error) {
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  console.error(JSON.stringify({ threw: { name, message } }));
  Deno.exit(1);
}
acks.close();

async function run() {
  if (role === "long") {
    const store = await openStoreFor(target!, db!, { busy: "thrown" });
    await store.createSession("long");
    await appendAcked(store, "long");
    Deno.writeTextFileSync(ready!, `${Deno.pid}\n`);
    while (!exists(stop!)) {
      if (performance.now() > end) Deno.exit(TIMED_OUT);
      await appendAcked(store, "long");
      // Pacing, not correctness: leave B the lock between appends, or B waits out its busy
      // timeout behind a writer that never lets go.
      Atomics.wait(pace, 0, 0, 2);
    }
    await store.close();
  } else if (role === "short") {
    for (let round = 0; round < Number(rounds); round++) {
      const store = await openStoreFor(target!, db!, { busy: "thrown" });
      await store.createSession("short");
      await appendAcked(store, "short");
      await appendAcked(store, "short");
      await store.close();
    }
  } else if (role === "read") {
    const store = await openStoreFor(target!, db!, { busy: "thrown" });
    const sessions: Record<string, string[]> = {};
    for (const session of ["long", "short"]) {
      try {
        sessions[session] = (await store.getMessages(session)).map((m) => m.content ?? "");
      } catch {
        sessions[session] = [];
      }
    }
    await store.close();
    printReport(sessions);
  } else {
    console.error(`Invalid role "${role}": use long, short or read`);
    Deno.exit(2);
  }
}
