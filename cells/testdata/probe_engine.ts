// Prints what `probeStore` finds for a target on a leg (JSON), run with the tasks'
// permissions rather than -A (as `deno task matrix` runs the cells): the engine must be
// read from evidence there too. Usage: probe_engine.ts <target> <library> <version>.
import { probeStore } from "../engine/probe_store.ts";

const [target, library, sqliteVersion] = Deno.args;
const probe = await probeStore(target!, {
  leg: { name: "default", library: library!, sqliteVersion: sqliteVersion! },
});
console.log(JSON.stringify(probe));
