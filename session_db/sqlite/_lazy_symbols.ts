// Symbols bound on first use. `Deno.dlopen` compiles a call stub for every symbol it is
// given, about 0.15 ms each; a child process that opens a store calls about 25 of the
// binding's 43, and the crash cells start thousands of such children. Another
// `Deno.dlopen` of the same path only takes a reference to the loaded library, so each
// symbol is bound alone, the first time it is read, and keeps that function.

/** How {@linkcode lazySymbols} binds. */
export interface LazySymbolsOptions {
  /** Symbols bound at once, together: the call throws if the library lacks one. */
  eager: readonly string[];
  /** The error to throw when a symbol bound later cannot be. */
  onError(name: string, error: unknown): Error;
}

/**
 * The symbols of `path` as `Deno.dlopen(path, symbols).symbols` has them: the eager ones
 * bound now, every other one the first time it is read. Symbols marked `optional` read
 * `null` when the library lacks them.
 */
export function lazySymbols<S extends Deno.ForeignLibraryInterface>(
  path: string,
  symbols: S,
  options: LazySymbolsOptions,
): Deno.DynamicLibrary<S>["symbols"] {
  const eager = Object.fromEntries(options.eager.map((name) => [name, symbols[name]!]));
  const bound: Record<string, unknown> = { ...Deno.dlopen(path, eager).symbols };
  for (const name of Object.keys(symbols)) {
    if (name in bound) continue;
    Object.defineProperty(bound, name, {
      configurable: true,
      enumerable: true,
      get() {
        let value: unknown;
        try {
          value = Deno.dlopen(path, { [name]: symbols[name]! }).symbols[name];
        } catch (error) {
          throw options.onError(name, error);
        }
        Object.defineProperty(bound, name, { value, enumerable: true });
        return value;
      },
    });
  }
  return bound as Deno.DynamicLibrary<S>["symbols"];
}
