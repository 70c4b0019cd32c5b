// Bad input to the cells and the matrix: a missing target, a target without
// `openStore`, an unknown leg. Each is an error naming the problem and the fix, and a
// cell on a broken target FAILS (never passes, never skips).
import { ok, rejects, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { LegError } from "../../harness/legs.ts";
import { liveChildren } from "../../harness/child.ts";
import { prefixDurabilityCell } from "../prefix_durability/cell.ts";
import { runDefinitions } from "../engine/run_definitions.ts";
import { loadTarget, TargetError } from "./target.ts";

const faulty = (name: string) => new URL(`../testdata/faulty/${name}.ts`, import.meta.url);
const missing = faulty("no_such_target");
const options = { sanitizeResources: false, sanitizeOps: false };

Deno.test("a missing target module is a TargetError naming it and the fix", async () => {
  await rejects(() => loadTarget(missing), (error: unknown) => {
    ok(error instanceof TargetError);
    ok(error.message.startsWith(`Cannot load target module "${missing.href}": `), error.message);
    ok(error.message.includes("(check the path or URL"), error.message);
    return true;
  });
});

Deno.test("a target module without openStore is a TargetError naming it and the fix", async () => {
  const target = faulty("no_open_store");
  await rejects(() => loadTarget(target), (error: unknown) => {
    ok(error instanceof TargetError);
    ok(error.message.includes(`"${target.href}": it does not export openStore`), error.message);
    ok(error.message.includes("(export a function that opens your store)"), error.message);
    return true;
  });
  // One held by its default export: the fix names the export by name.
  const held = "data:application/typescript,export default { openStore() {} };";
  await rejects(() => loadTarget(held), (error: unknown) => {
    ok(error instanceof TargetError);
    ok(error.message.includes("(its default export holds one: export it by name"), error.message);
    return true;
  });
});

for (
  const [name, problem] of [
    ["no_such_target", "Cannot load target module"],
    ["no_open_store", "Invalid target module"],
  ] as const
) {
  Deno.test({
    name: `a cell on target ${name} fails with the loader's message`,
    ...options,
    async fn() {
      const outcomes = await runDefinitions(
        await prefixDurabilityCell({ target: faulty(name), keepEvidence: false }),
      );
      strictEqual(outcomes.length, 1);
      strictEqual(outcomes[0]?.status, "FAIL", "a broken target must fail, not pass or skip");
      // The loader's own message leads.
      ok(outcomes[0].detail?.startsWith(problem), outcomes[0].detail);
      strictEqual(liveChildren().length, 0, "a child outlived its test");
    },
  });
}

Deno.test("an unknown SESSION_DB_JOURNAL_MODE makes the cells refuse the leg", async () => {
  const saved = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  Deno.env.set("SESSION_DB_JOURNAL_MODE", "bogus");
  try {
    await rejects(
      () => prefixDurabilityCell({ target: faulty("writer_dies") }),
      (error: unknown) => {
        ok(error instanceof LegError);
        ok(
          error.message.includes(
            'Unknown journal-mode leg "bogus": use one of default, delete, wal',
          ),
          error.message,
        );
        return true;
      },
    );
  } finally {
    if (saved === undefined) Deno.env.delete("SESSION_DB_JOURNAL_MODE");
    else Deno.env.set("SESSION_DB_JOURNAL_MODE", saved);
  }
});

Deno.test("an unknown SESSION_DB_JOURNAL_MODE or --legs value makes the matrix exit 2", async () => {
  const matrix = fileURLToPath(new URL("../../tools/matrix.ts", import.meta.url));
  for (
    const [env, args] of [
      [{ SESSION_DB_JOURNAL_MODE: "bogus" }, []],
      [{}, ["--legs", "default,bogus"]],
    ] as const
  ) {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-lock", "-A", matrix, "--no-build", ...args],
      clearEnv: true,
      env: { PATH: Deno.env.get("PATH") ?? "", HOME: Deno.env.get("HOME") ?? "", ...env },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    strictEqual(output.code, 2, stderr);
    ok(
      stderr.includes('Unknown journal-mode leg "bogus": use one of default, delete, wal'),
      stderr,
    );
    strictEqual(new TextDecoder().decode(output.stdout), "", "the matrix ran anyway");
  }
});
