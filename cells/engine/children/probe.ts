// The leg probe: opens the store, writes, reports which methods it has, then waits to be
// killed: the parent reads which libraries the process mapped while it is alive, and
// observes the journal mode the store ran in with no clean close first (a store could
// switch modes in `close()`). When loading the target, opening or writing throws, or the
// first appends answer outside the contract, it prints that as a typed line and exits with
// PROBE_THREW: the parent leads with the store's own error or answer.
import { childArgs, waitToBeKilled } from "../../contract/child_runtime.ts";
import { loadTarget, methodsOf, type Store } from "../../contract/target.ts";
import { PROBE_THREW, type ProbeLine, type ProbeStage, thrownAt } from "../_probe_line.ts";
import { firstAppendsProblem } from "../_first_appends.ts";
import { printReport } from "../../../internal/report_line.ts";

const [target, dbPath, readyPath] = childArgs(3, "probe.ts <target> <db> <ready>");

/** The store answered outside the contract: said as a line, and the child ends. */
function answered(problem: string): never {
  const line: ProbeLine = { answered: problem };
  printReport(line);
  Deno.exit(PROBE_THREW);
}

function threw(stage: ProbeStage, error: unknown): never {
  const line: ProbeLine = { threw: thrownAt(stage, error) };
  printReport(line);
  console.error(error instanceof Error ? error.stack ?? error.message : String(error));
  Deno.exit(PROBE_THREW);
}

let stage: ProbeStage = "load";
let store: Store;
try {
  const module = await loadTarget(target!);
  stage = "openStore";
  const raw = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  const journalMode = raw === "wal" || raw === "delete" ? raw : undefined;
  store = await module.openStore(dbPath!, journalMode ? { journalMode } : {});
  stage = "createSession";
  await store.createSession("probe");
  stage = "appendMessage";
  const ids: unknown[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push(await store.appendMessage("probe", { role: "user", content: `probe ${i}` }));
  }
  stage = "getMessages";
  const problem = firstAppendsProblem("probe", ids, await store.getMessages("probe"));
  if (problem) answered(problem);
} catch (error) {
  threw(stage, error);
}
const methods = methodsOf(store);
// A store that explains its journal mode (SessionDB's `journalModeReason`) says why a
// leg was not honoured, e.g. the WAL-reset gate.
const said = (store as unknown as { journalModeReason?: unknown }).journalModeReason;
const line: ProbeLine = {
  methods,
  ...(typeof said === "string" ? { journalModeReason: said } : {}),
};
printReport(line);
waitToBeKilled(readyPath!);
