// A bound on how many of the runner's jobs (a leg's `deno test`, a tier's child) run at
// once; waiting jobs start highest priority first, then in the order they came.

/** Runs at most `size` jobs at once. */
export class Pool {
  #free: number;
  #waiting: { priority: number; order: number; start: () => void }[] = [];
  #order = 0;

  /** A pool of `size` slots (at least 1). */
  constructor(size: number) {
    this.#free = Math.max(1, size);
  }

  /** Runs `job` when a slot is free, higher `priority` first. */
  async run<T>(job: () => Promise<T>, priority = 0): Promise<T> {
    if (this.#free > 0) this.#free--;
    else {
      await new Promise<void>((start) => {
        this.#waiting.push({ priority, order: this.#order++, start });
        this.#waiting.sort((a, b) => b.priority - a.priority || a.order - b.order);
      });
    }
    try {
      return await job();
    } finally {
      const next = this.#waiting.shift();
      if (next) next.start();
      else this.#free++;
    }
  }
}
