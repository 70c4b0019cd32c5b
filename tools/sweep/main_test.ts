// The sweep's command line: --help prints the flag table and exit codes; a bad value is a
// usage error (exit 2) naming the flag, before any child starts; a run that judged nothing
// prints SKIP with why and exits 1, never 0.
import { deepStrictEqual, ok } from "node:assert/strict";

const MAIN = new URL("./main.ts", import.meta.url);

async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "-A", MAIN.href, ...args],
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
      `${Deno.makeTempDirSync()}/report.json`,
    );
    deepStrictEqual(code, 1, out);
    ok(/: 0 states in [\d.]+ s .*: SKIP \(.*lacks/.test(out), out);
    ok(!/: PASS/.test(out), out);
  },
});
