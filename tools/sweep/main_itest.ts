// The sweep's command line: --help prints the flag table and exit codes, its shared flags
// word for word as every other task's; a bad value is a usage error (exit 2) naming the
// flag, before any child starts; a run that judged nothing prints SKIP with why on the one
// table's grouped line and the verdict line, and exits 1, never 0.
import { deepStrictEqual, ok } from "node:assert/strict";
import { helpText, type ToolSpec } from "../_cli.ts";
import { CONFORMANCE_CLI } from "../conformance.ts";
import { MATRIX_CLI } from "../matrix.ts";
import { POWERLOSS_CELLS_CLI } from "../powerloss_cells.ts";
import { SWEEP_CLI } from "./main.ts";
import { daemonsLeft, markedRun } from "../_test_helpers.ts";
import { DAEMONS } from "../testdata/escaping_daemon_target.ts";
import type { Outcome } from "../../runner/result.ts";
import { testFolder } from "../../internal/_test_folder.ts";

const MAIN = new URL("./main.ts", import.meta.url);

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return await runWith({}, ...args);
}

async function runWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; out: string; err: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "-A", MAIN.href, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, out: decode(output.stdout), err: decode(output.stderr) };
}

Deno.test("sweep --help prints every flag and the exit codes", async () => {
  const { code, out } = await run("--help");
  deepStrictEqual(code, 0);
  const shared = ["--target", "--cells", "--legs", "--libraries", "--seed", "--jobs", "--json"];
  for (const flag of [...shared, "--quick", "--syscalls", "--power-loss", "--state", "--resumes"]) {
    ok(out.includes(flag), `${flag} missing from --help:\n${out}`);
  }
  ok(/Exit codes:\n {2}0 .*\n {2}1 .*\n {2}2 /.test(out), out);
});

Deno.test("every task's shared flags read the same: name, value, meaning and default", () => {
  const shared = ["--target", "--cells", "--legs", "--libraries", "--seed", "--jobs", "--quick"];
  const tools: [string, ToolSpec][] = [
    ["sweep", SWEEP_CLI],
    ["powerloss-cells", POWERLOSS_CELLS_CLI],
    ["matrix", MATRIX_CLI],
    ["conformance", CONFORMANCE_CLI],
  ];
  const lineOf = (tool: ToolSpec, flag: string) =>
    helpText({ ...tool, flags: tool.flags.filter((f) => f.name === flag) }).split("\n")
      .find((l) => l.startsWith(`  ${flag}`))?.replace(/ +/g, " ");
  for (const flag of shared) {
    const lines = new Set(
      tools.filter(([, tool]) => tool.flags.some((f) => f.name === flag))
        .map(([, tool]) => lineOf(tool, flag)),
    );
    deepStrictEqual(lines.size, 1, `${flag} differs between tasks:\n${[...lines].join("\n")}`);
  }
  for (const [name, tool] of tools.filter(([name]) => name !== "matrix")) {
    ok(tool.flags.some((f) => f.name === "--quick"), `${name} lacks --quick`);
  }
  for (const [name, tool] of tools) {
    for (const flag of ["--target", "--cells", "--legs", "--libraries", "--seed", "--jobs"]) {
      ok(tool.flags.some((f) => f.name === flag), `${name} lacks ${flag}`);
    }
    ok(tool.flags.some((f) => f.name === "--json"), `${name} lacks --json`);
  }
});

Deno.test("sweep rejects bad numbers and states with exit 2", async () => {
  const cases: [string[], RegExp][] = [
    [["--seed", "x"], /Invalid --seed "x"/],
    [["--jobs", "0"], /Invalid --jobs "0"/],
    [["--k", "1,0"], /Invalid --k "0"/],
    [["--max-length=9"], /Invalid --max-length "9"/],
    [["--state", "appendMessage"], /Invalid sweep state "appendMessage"/],
    [["--libraries", "newest"], /Unknown library "newest"/],
    [["--cells", "7"], /Unknown cell "7"/],
    [["--syscalls", "--profile", "ext9"], /Invalid --profile "ext9"/],
  ];
  for (const [args, message] of cases) {
    const { code, err } = await run(...args);
    deepStrictEqual(code, 2, `${args.join(" ")}: ${err}`);
    ok(message.test(err), `${args.join(" ")}: ${err}`);
  }
});

Deno.test({
  name: "sweep: a run that judged nothing says SKIP with why and exits 1",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // Deno KV has no rotation methods: cell 3's clause has no program to judge.
    const { code, out } = await run(
      "--syscalls",
      "--target",
      "targets/deno_kv.ts",
      "--cells",
      "3",
      "--legs",
      "default",
      "--json",
      `${testFolder()}/report.json`,
    );
    deepStrictEqual(code, 1, out);
    // The one table: identical SKIPs grouped on one line, with why.
    ok(/^cell 3 × default × own: SKIP: .*lacks/m.test(out), out);
    ok(/: 0 states in [\d.]+ s .*: SKIP \(.*lacks/.test(out), out);
    ok(!/: PASS/.test(out), out);
  },
});

Deno.test({
  name: "sweep: daemons left by the tool and by a library's share fail it, named; none remains",
  ignore: Deno.build.os !== "linux",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const json = `${testFolder()}/report.json`;
    const { evidenceDir, args } = await markedRun([DAEMONS.tool, DAEMONS.library]);
    const { code, out } = await runWith(
      { CELLS_EVIDENCE_DIR: evidenceDir },
      ...["--syscalls", "--max-length", "1", "--cells", "1", "--legs", "default"],
      ...["--libraries", "system", "--target", "tools/testdata/escaping_daemon_target.ts"],
      ...["--json", json],
    );
    const report = JSON.parse(Deno.readTextFileSync(json)) as {
      results: Outcome[];
      survivors: { pid: number; commandLine: string }[];
    };
    deepStrictEqual(code, 1, out);
    deepStrictEqual(report.survivors.map((s) => s.commandLine.split("/").at(-1)), [
      `sleep ${args[0]}`,
    ]);
    ok(out.includes(`sweep: FAIL: 1 process survived the sweep run (killed now): pid `), out);
    const share = report.results.find((r) => r.clause === "no survivors");
    deepStrictEqual([share?.tier, share?.leg, share?.library, share?.status], [
      "syscalls-crash",
      "default",
      "system",
      "FAIL",
    ]);
    ok(share!.checks![0]!.includes(`sleep ${args[1]})`), share!.checks![0]);
    deepStrictEqual(report.results.find((r) => r.cell === 1)?.status, "PASS", out);
    ok(/: FAIL \(1 result\(s\) failed\)$/m.test(out), out);
    deepStrictEqual(daemonsLeft(args), [], "the daemons were killed");
  },
});
