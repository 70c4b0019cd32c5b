import { strictEqual } from "node:assert/strict";
import { START_CWD } from "./start_cwd.ts";
import { testFolder } from "./_test_folder.ts";

// A parallel test worker loads the suite's modules whenever it starts, perhaps while a store
// judged in another has moved the process into its folder: it must read where the process
// started, not that folder (which the suite removes, and children started there then fail).
Deno.test("an isolate loading the module after the process moved reads where it started", async () => {
  const moved = testFolder();
  Deno.chdir(moved);
  try {
    const worker = new Worker(new URL("./testdata/start_cwd_worker.ts", import.meta.url), {
      type: "module",
    });
    const read = await new Promise<unknown>((resolve) => worker.onmessage = (e) => resolve(e.data));
    worker.terminate();
    strictEqual(read, START_CWD);
  } finally {
    Deno.chdir(START_CWD!);
  }
});
