// The leg probe: opens the store, writes once, reports which methods it has.
import { childArgs, openStoreFor } from "./child_runtime.ts";

const [target, dbPath] = childArgs(2, "_probe.ts <target> <db>");
const store = await openStoreFor(target!, dbPath!);
await store.createSession("probe");
await store.appendMessage("probe", { role: "user", content: "probe" });
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
await store.close();
console.log(JSON.stringify({
  methods: [...new Set(methods)],
  ...(typeof said === "string" ? { journalModeReason: said } : {}),
}));
