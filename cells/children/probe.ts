// The leg probe: opens the store, writes, reports which methods it has, then waits to be
// killed: the parent observes the journal mode the store ran in with no clean close first
// (a store could switch modes in `close()`).
import { childArgs, openStoreFor, waitToBeKilled } from "../child_runtime.ts";

const [target, dbPath, readyPath] = childArgs(3, "probe.ts <target> <db> <ready>");
const store = await openStoreFor(target!, dbPath!);
await store.createSession("probe");
for (let i = 0; i < 3; i++) {
  await store.appendMessage("probe", { role: "user", content: `probe ${i}` });
}
const methods: string[] = [];
for (let o: object | null = store; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
  for (const name of Object.getOwnPropertyNames(o)) {
    if (typeof (store as unknown as Record<string, unknown>)[name] === "function") {
      methods.push(name);
    }
  }
}
// A store that explains its journal mode (SessionDB's `journalModeReason`) says why a
// leg was not honoured, e.g. the WAL-reset gate.
const said = (store as unknown as { journalModeReason?: unknown }).journalModeReason;
console.log(JSON.stringify({
  methods: [...new Set(methods)],
  ...(typeof said === "string" ? { journalModeReason: said } : {}),
}));
waitToBeKilled(readyPath!);
