// A child process's stderr in one line, for a failure's reason.

/**
 * A child's stderr as one line: for an uncaught error, Deno's `error: …` line (the message;
 * the source excerpt under it left out) and the two stack frames after it; else its last
 * four lines.
 *
 * @param text The child's stderr.
 * @returns The line, its parts joined by ` | `.
 * @example
 * ```ts
 * import { stderrLine } from "./stderr_line.ts";
 * console.log(stderrLine("error: Uncaught Error: no\n  throw x;\n  ^\n    at f (a.ts:1:1)"));
 * // error: Uncaught Error: no |     at f (a.ts:1:1)
 * ```
 */
export function stderrLine(text: string): string {
  const lines = text.trim().split("\n");
  const header = lines.findLastIndex((line) => line.startsWith("error: "));
  if (header < 0) return lines.slice(-4).join(" | ");
  const frames = lines.slice(header + 1).filter((line) => /^\s+at /.test(line)).slice(0, 2);
  return [lines[header]!, ...frames].join(" | ");
}
