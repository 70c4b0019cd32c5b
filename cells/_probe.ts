// The leg probe: opens the store, writes once, reports which methods it has.
import { childArgs, openStoreFor } from "./_child.ts";

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
await store.close();
console.log(JSON.stringify({ methods: [...new Set(methods)] }));
