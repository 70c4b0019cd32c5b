// How long the cells that run for a span (6 and 7) run: short by default, so that the
// whole suite stays quick; the matrix and the soak ask for more with CELLS_SPAN.

/**
 * The span a run uses: the option, else `CELLS_SPAN`, else 1.
 *
 * @param option The cell's `span` option.
 * @returns A positive factor on the cell's default amount of work.
 * @throws {RangeError} When `CELLS_SPAN` is not a positive number.
 */
export function spanOf(option: number | undefined): number {
  if (option !== undefined) return option;
  return parseSpan(Deno.env.get("CELLS_SPAN"));
}

/**
 * The span `raw` holds as `CELLS_SPAN`, 1 when unset.
 *
 * @param raw The variable's value.
 * @returns A positive factor.
 * @throws {RangeError} When it is not a positive number.
 */
export function parseSpan(raw: string | undefined): number {
  const span = raw === undefined ? 1 : Number(raw);
  if (!(span > 0) || !Number.isFinite(span)) {
    throw new RangeError(`Invalid CELLS_SPAN "${raw}": use a positive number such as 1 or 10`);
  }
  return span;
}
