// A command run to its end, its output piped and decoded: what the tests' tool and child
// runners share.

/** A finished command: how it ended and what it printed. */
export interface CommandResult {
  /** The exit code. */
  code: number;
  /** The signal that ended it, if one did. */
  signal: Deno.Signal | null;
  /** Whether it exited 0. */
  success: boolean;
  /** Its standard output, decoded. */
  stdout: string;
  /** Its standard error, decoded. */
  stderr: string;
}

/**
 * Runs `command` to its end with no input and its output piped.
 *
 * @example
 * ```ts
 * import { runCommand } from "./command.ts";
 * const { stdout } = await runCommand(Deno.execPath(), { args: ["--version"] });
 * console.log(stdout.split("\n")[0]);
 * ```
 *
 * @param command The program.
 * @param options Its arguments, environment and the like (stdio is set here).
 * @returns Its exit and decoded output.
 */
export async function runCommand(
  command: string | URL,
  options: Deno.CommandOptions,
): Promise<CommandResult> {
  const output = await new Deno.Command(command, {
    ...options,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    signal: output.signal,
    success: output.success,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}
