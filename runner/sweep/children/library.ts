// One library's share of a tier, in a process of its own (the FFI binding loads the library
// `DENO_SQLITE_PATH` names, once per process):
//   library.ts <request.json> <result.json>
// Progress lines go to stdout; the typed result is written to <result.json>, with what this
// process started and left running (its run scope, reaped at the end).
import { reapRunScope } from "../../../harness/process_tree.ts";
import { type LibraryRequest, runLibrary } from "../library.ts";

const [requestPath, resultPath] = Deno.args;
if (!requestPath || !resultPath) {
  console.error("usage: library.ts <request.json> <result.json>");
  Deno.exit(2);
}
const request = JSON.parse(Deno.readTextFileSync(requestPath)) as LibraryRequest;
const result = await runLibrary(request, (line) => console.log(line));
const survivors = await reapRunScope();
Deno.writeTextFileSync(resultPath, JSON.stringify({ ...result, survivors }) + "\n");
// Done: the store ran in this process too (its states judged here), and a timer it never
// cleared must not keep the share, and the tier waiting on it, alive.
Deno.exit(0);
