// Cell 6's open window, the opener: opens the store on a new file whose write lock another
// process holds (`open_holder.ts`), then creates a session and appends one message. It
// writes when it starts opening (the target already loaded) and how it ended, as JSON:
// `{ "k": "opened", "id", "ms" }` or `{ "k": "error", "name", "message", "ms" }`.
import { writeWhole } from "../../../internal/fs.ts";
import { childArgs, lifetimeGuard } from "../../contract/child_runtime.ts";
import { loadTarget, openTargetStore } from "../../contract/load_target.ts";

const [target, dbPath, openingPath, resultPath] = childArgs(
  4,
  "opener.ts <target> <db> <opening file> <result file>",
);
setInterval(lifetimeGuard(), 1000);
await loadTarget(target!);
writeWhole(openingPath!, `${Date.now()}\n`);
const began = performance.now();
try {
  const store = await openTargetStore(target!, dbPath!);
  await store.createSession("opened");
  const id = await store.appendMessage("opened", { role: "user", content: "opened" });
  await store.close();
  writeWhole(resultPath!, JSON.stringify({ k: "opened", id, ms: performance.now() - began }));
  Deno.exit(0);
} catch (error) {
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  writeWhole(
    resultPath!,
    JSON.stringify({ k: "error", name, message, ms: performance.now() - began }),
  );
  console.error(`opener pid ${Deno.pid}: ${name}: ${message}`);
  Deno.exit(1);
}
