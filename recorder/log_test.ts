// readLog: a log nobody wrote is the suite's failure (the recorder never loaded in the
// store's process), never a verdict on the store.
import { ok, throws } from "node:assert/strict";
import { isHarnessError } from "../harness/harness_error.ts";
import { testFolder } from "../internal/_test_folder.ts";
import { readLog } from "./log.ts";

Deno.test("readLog: a missing log is a HarnessError naming LD_PRELOAD", () => {
  const path = `${testFolder()}/fs.log`;
  throws(() => readLog(path), (error: unknown) => {
    ok(isHarnessError(error), String(error));
    ok(String(error).includes("LD_PRELOAD"), String(error));
    return true;
  });
});

Deno.test("readLog: an empty log reads as no records", () => {
  const path = `${testFolder()}/fs.log`;
  Deno.writeFileSync(path, new Uint8Array(0));
  ok(readLog(path).records.length === 0);
});
