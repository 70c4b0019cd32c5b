// What the tools' tests share: running a tool as a user would, to read its output and code.

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
 * @param permissions Its `--allow-*` flags.
 * @param args Its arguments.
 * @param env Variables added to this process's environment.
 * @returns Its exit code and output.
 */
export async function runTool(
  tool: URL,
  permissions: readonly string[],
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<ToolRun> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, tool.href, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}
