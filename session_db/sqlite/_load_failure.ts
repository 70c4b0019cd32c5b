// What is wrong with a library that did not load, in words, from the loader's message.

/**
 * Names what is wrong with a library that did not load.
 *
 * @param path The library's path.
 * @param error What the loader threw.
 * @returns The problem, e.g. `… is not a SQLite library: it lacks the symbol sqlite3_open_v2`.
 */
export function describeLoadFailure(path: string, error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  const symbol = /Failed to register symbol (\w+)/.exec(raw)?.[1] ??
    /undefined symbol: (\w+)/.exec(raw)?.[1];
  // A library that loads but lacks the API is another library, e.g. libz.
  if (symbol) return `${path} is not a SQLite library: it lacks the symbol ${symbol}`;
  if (/No such file or directory|cannot find|image not found/i.test(raw)) {
    return `${path} does not exist`;
  }
  if (/Is a directory/i.test(raw)) return `${path} is a directory, not a library file`;
  const reason = raw.split(": ").at(-1) ?? raw;
  return `${path} is not a loadable shared library (${reason})`;
}
