// Under a real `deno test`, a cell whose check fails must report FAIL and keep its
// evidence (a failed step returns false there instead of throwing). Two rounds: the
// second kills the writer the instant an append is acknowledged, so the mutant that
// acknowledges before COMMIT loses it every time, whatever the timing.
import { ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { sqliteLibraryPath } from "../../session_db/sqlite/database.ts";
import { testFolder } from "../../internal/_test_folder.ts";

Deno.test("a failed check makes the cell report FAIL under deno test", async () => {
  const dir = testFolder({ prefix: "report-test-" });
  try {
    const cell = new URL("../prefix_durability/cell.ts", import.meta.url).href;
    const mutant = new URL("../testdata/mutants/ack_before_commit.ts", import.meta.url).href;
    const file = join(dir, "cell_test.ts");
    await Deno.writeTextFile(
      file,
      `import { prefixDurabilityCell } from ${JSON.stringify(cell)};\n` +
        `for (const t of await prefixDurabilityCell({ target: ${
          JSON.stringify(mutant)
        }, rounds: 2 })) Deno.test(t);\n`,
    );
    const env: Record<string, string> = {
      CELLS_REPORT_DIR: join(dir, "reports"),
      CELLS_EVIDENCE_DIR: join(dir, "evidence"),
      DENO_SQLITE_PATH: sqliteLibraryPath(),
      NO_COLOR: "1",
    };
    for (const name of ["PATH", "HOME", "DENO_DIR"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["test", "--no-config", "--no-lock", "--no-check", "-A", file],
      clearEnv: true,
      env,
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const output = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    ok(!out.success, `deno test passed on a mutant:\n${output}`);
    const reports = [...Deno.readDirSync(join(dir, "reports"))];
    strictEqual(reports.length, 1);
    const report = JSON.parse(Deno.readTextFileSync(join(dir, "reports", reports[0]!.name)));
    strictEqual(report.status, "FAIL");
    ok(/nothing acknowledged lost/.test(report.reason), report.reason);
    ok(report.evidence, "the evidence was not kept");
    ok(Deno.statSync(join(report.evidence, "evidence.json")).isFile);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
