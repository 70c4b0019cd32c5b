// Without the file-system call recorder a cell cannot kill inside an operation at each of its
// calls, so it would judge only where random kills fell: the cell ends in ERROR naming why.
import { match, strictEqual } from "node:assert/strict";
import { fromFileUrl } from "../../internal/path.ts";

Deno.test("a cell whose kill series has no recorder ends in ERROR with the reason", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      fromFileUrl(new URL("./testdata/cell_without_recorder.ts", import.meta.url)),
    ],
    env: { CC: "no-such-compiler-here" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const line = stdout.trim().split("\n").at(-1) ?? "";
  const outcome = JSON.parse(line) as { status?: string; detail?: string };
  strictEqual(outcome.status, "ERROR", `not an ERROR: ${line}`);
  match(outcome.detail ?? "", /Cannot run the kill series for appendMessages?: no C compiler/);
});
