// A tool's run in miniature: starts its run scope, then a process that leaves a daemon
// in a session of its own (`leak`) or one that ends cleanly (`clean`), awaits it, and
// prints what reapRunScope found still running (as JSON).
import { reapRunScope, startRunScope } from "../process_tree.ts";

const [mode = "clean"] = Deno.args;
startRunScope();
const script = mode === "leak" ? "exec setsid -f sleep 301.5" : "exit 0";
await new Deno.Command("setsid", {
  args: ["sh", "-c", script],
  stdin: "null",
  stdout: "null",
  stderr: "null",
}).output();
console.log(JSON.stringify(await reapRunScope(200)));
