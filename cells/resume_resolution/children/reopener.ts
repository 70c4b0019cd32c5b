// Cell 8's reopener: calls reopenOrphanedCompressionSession on one session, prints the
// answer as one JSON line, then waits to be killed with no further write and no close: a
// reopen it was told of must be durable the moment it returned.
import { answerOf } from "../../contract/typed.ts";
import { childArgs, openStoreFor, waitToBeKilled } from "../../contract/child_runtime.ts";
import { printReport } from "../../../internal/report_line.ts";

const [target, dbPath, session, ready] = childArgs(
  4,
  "reopener.ts <target> <db> <session> <ready>",
);
const store = await openStoreFor(target!, dbPath!);
const answer = await answerOf(() => store.reopenOrphanedCompressionSession!(session!));
printReport(answer);
waitToBeKilled(ready!);
