// What the tools' tests share: running a tool as a user would, to read its output and
// code, and finding the test daemons it may have left running.
import { libc, sendSignal, SIGNALS } from "../harness/_libc.ts";
import { allStats, commandLine, running } from "../harness/_proc.ts";
import { runCommand } from "../internal/command.ts";
import { testFolder } from "../internal/_test_folder.ts";

/** The tools' flags for the smallest real run: cell 1, the default leg, the system SQLite. */
export const CELL_1_DEFAULT_SYSTEM: readonly string[] = [
  "--cells",
  "1",
  "--legs",
  "default",
  "--libraries",
  "system",
];

/** A finished tool run: exit code and decoded output. */
export interface ToolRun {
  /** The exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/**
 * Runs `deno run <permissions> <tool> <args>` and waits for it.
 *
 * @param tool The tool's module URL.
 * @param args Its arguments.
 * @param options Its `--allow-*` flags, and variables added to this process's environment.
 * @returns Its exit code and output.
 */
export async function runTool(
  tool: URL,
  args: readonly string[],
  options: { permissions: readonly string[]; env?: Record<string, string> },
): Promise<ToolRun> {
  const { permissions, env = {} } = options;
  const { code, stdout, stderr } = await runCommand(Deno.execPath(), {
    args: ["run", ...permissions, tool.href, ...args],
    env,
  });
  return { code, stdout, stderr };
}

/**
 * The running `sleep <arg>` processes for any of `args` (the test targets' daemons,
 * recognisable by their argument), and, with `kill`, SIGKILLs each by its pid.
 *
 * @param args The daemons' arguments.
 * @param kill Whether to kill the ones found.
 * @returns Each one's pid and argument.
 */
export function daemonsLeft(
  args: readonly string[],
  kill = false,
): { pid: number; args: string }[] {
  const c = libc()!;
  const found = [...allStats(c).values()].filter((s) => running(s)).flatMap((s) => {
    const [program = "", ...rest] = commandLine(c, s.pid).split(" ");
    const arg = rest.join(" ");
    return program.split("/").at(-1) === "sleep" && args.includes(arg)
      ? [{ pid: s.pid, args: arg }]
      : [];
  });
  if (kill) { for (const d of found) sendSignal(c, d.pid, SIGNALS.SIGKILL); }
  return found;
}

/**
 * An evidence folder whose name marks a run's test daemons as its own
 * (`tools/testdata/escaping_daemon_target.ts`), and the daemons' arguments under that mark.
 *
 * @param daemons The daemons' first arguments.
 * @returns The folder and each daemon's whole argument string.
 */
export async function markedRun(
  daemons: readonly string[],
): Promise<{ evidenceDir: string; args: string[] }> {
  const digits = String(crypto.getRandomValues(new Uint32Array(1))[0]);
  const evidenceDir = `${testFolder()}/escaping-${digits}`;
  await Deno.mkdir(evidenceDir);
  return { evidenceDir, args: daemons.map((d) => `${d} 0.${digits}`) };
}
