/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
// The worker of `target.ts`: holds the reference store and answers each posted call.
import { SessionDB } from "../../../session_db/mod.ts";

let db: SessionDB | undefined;
self.onmessage = (event: MessageEvent) => {
  const { id, method, args } = event.data;
  try {
    let result: unknown;
    if (method === "open") {
      db = SessionDB.open(args[0], args[1]);
      result = Object.getOwnPropertyNames(Object.getPrototypeOf(db))
        .filter((name) => typeof Reflect.get(db!, name) === "function" && name !== "constructor");
    } else {
      result = (Reflect.get(db!, method) as (...a: unknown[]) => unknown).apply(db, args);
    }
    self.postMessage({ id, ok: true, result });
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    self.postMessage({ id, ok: false, name: e.name, message: e.message });
  }
};
