// Work over a list with a bound on how much is in flight.

/** Runs `work` over `items` with `jobs` in flight; the results in item order. */
export async function pool<T, R>(
  items: readonly T[],
  jobs: number,
  work: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, worker));
  return out;
}
