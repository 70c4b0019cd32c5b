// What the JSON-lines mutants share: the log's text as their own reader sees it.

/** The log's text, or `""` when there is no log yet. */
export function logText(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "";
    throw error;
  }
}
