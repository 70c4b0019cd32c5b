// The kill matrix's command line; the matrix itself is asserted by cells/mutants_itest.ts.
import { match, ok, strictEqual } from "node:assert/strict";
import { runTool } from "../../_test_helpers.ts";

const run = (env: Record<string, string>, ...args: string[]) =>
  runTool(new URL("./main.ts", import.meta.url), args, { permissions: ["-A"], env });

Deno.test("deno task mutants: --help prints the flags and exit codes; usage errors exit 2", async () => {
  const help = await run({}, "--help");
  strictEqual(help.code, 0);
  const text = help.stdout;
  const lines = [
    "Usage: deno task mutants [flags]",
    "--jobs N",
    "--only LIST",
    "--kinds LIST",
    "  1   ",
  ];
  for (const line of lines) {
    ok(text.includes(line), `--help lacks "${line}":\n${text}`);
  }
  const cases: [Record<string, string>, string[], RegExp][] = [
    [{}, ["--jobs", "0"], /Invalid --jobs "0": use a whole number from 1 to 64/],
    [{}, ["--only", "nope"], /Unknown target "nope": use one of ack_before_commit/],
    [{}, ["--libraries", "mine"], /Unknown library "mine": use current, system and\/or fixed/],
    [{}, ["--kinds", "all"], /Unknown kind "all": use planted, split, where/],
    [{ SESSION_DB_JOURNAL_MODE: "memory" }, [], /Unknown journal-mode leg "memory"/],
  ];
  for (const [env, args, message] of cases) {
    const bad = await run(env, ...args);
    strictEqual(bad.code, 2, `${args.join(" ")} exited ${bad.code}`);
    match(bad.stderr, message);
  }
});
