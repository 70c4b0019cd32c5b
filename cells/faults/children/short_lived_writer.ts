// F5's child. `short`: opens the store, appends its planned messages to the shared
// session (and one to a session of its own), closes. `long`: appends to the shared
// session in a loop until the stop file exists, then closes. `verify`: a fresh life that
// reads the sessions named and the store's invariants. The open is journaled once it
// returned (`open`); every append is journaled before it
// is invoked (`inv`) and once it returned (`ack`) or was refused busy (`refused`); any
// other error is journaled and ends the child with code 1.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { exists } from "../../../internal/fs.ts";
import { childArgs, lifetimeGuard, openStoreFor } from "../../contract/child_runtime.ts";
import { BUSY_REFUSAL, retriedWhileBusy } from "../../contract/typed.ts";

const [target, mode, dbPath, journalPath, shared, arg = ""] = childArgs(
  5,
  "short_lived_writer.ts <target> <short|long|verify> <db> <journal> <shared session> [plan]",
);
const journal = new AckWriter(journalPath!);
const guard = lifetimeGuard();
const name = `${mode}-${Deno.pid}`;
/** A long writer's pause between appends. */
const LONG_PACE_MS = 5;

try {
  // An open or a session's creation refused as busy changed nothing: made again, as an
  // application would. An append's refusal is journaled: F5 judges those.
  const store = await retriedWhileBusy(() => openStoreFor(target!, dbPath!, { busy: "thrown" }));
  journal.write({ k: "open" });
  if (mode === "verify") {
    const sessions: Record<string, unknown> = {};
    for (const id of [shared!, ...arg.split(",").filter(Boolean)]) {
      sessions[id] = await store.getMessages(id);
    }
    const problems = store.checkInvariants ? await store.checkInvariants() : null;
    journal.write({ k: "verify", sessions, problems });
  } else {
    await retriedWhileBusy(() => store.createSession(shared!));
    // `short`: "<count>:<own session>"; `long`: "<stop file>".
    const [count, own] = arg.split(":");
    if (own) await retriedWhileBusy(() => store.createSession(own));
    const plan = mode === "short"
      ? [...Array.from({ length: Number(count) }, () => shared!), ...(own ? [own] : [])]
      : [];
    for (let seq = 0; mode === "long" ? !exists(arg) : seq < plan.length; seq++) {
      guard();
      const session = plan[seq] ?? shared!;
      const content = `${name}:${seq}`;
      journal.write({ k: "inv", seq, session, content });
      try {
        const id = await store.appendMessage(session, { role: "user", content });
        journal.write({ k: "ack", seq, session, content, id });
      } catch (error) {
        if (!(error instanceof Error) || error.name !== BUSY_REFUSAL) throw error;
        journal.write({ k: "refused", seq, session, content, name: error.name });
      }
      // A long writer keeps the lock contended without starving the short ones of CPU.
      if (mode === "long") await new Promise((resolve) => setTimeout(resolve, LONG_PACE_MS));
    }
  }
  await store.close();
  journal.write({ k: "done" });
} catch (error) {
  const errorName = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  journal.write({ k: "error", name: errorName, message });
  console.error(`${name}: ${errorName}: ${message}`);
  Deno.exit(1);
}
