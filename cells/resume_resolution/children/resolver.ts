// Cell 8's fresh process: opens the recovered store, resolves every session named (and
// asks for its live continuation when the store can say), prints that view as one JSON
// line, closes and exits.
import { childArgs, openStoreFor } from "../../contract/child_runtime.ts";
import { resolutionView } from "../_chain.ts";
import { printReport } from "../../../internal/report_line.ts";

const [target, dbPath, ids] = childArgs(3, "resolver.ts <target> <db> <ids as JSON>");
const store = await openStoreFor(target!, dbPath!);
const view = await resolutionView(store, JSON.parse(ids!) as string[]);
await store.close();
printReport(view);
