// Runs cell definitions ahead of `deno test`, a few at once, and replays each run's steps
// when its test comes up: the cells spend most of their time waiting on children, start-up
// and syncs, so running two at a time roughly halves a suite of them on two cores. The runs
// use this process's permissions, not each definition's narrower ones (the matrix runs the
// cells under those).
import { testContext } from "./_test_context.ts";

interface Step {
  name: string;
  error?: unknown;
}

interface Recorded {
  steps: Step[];
  error?: unknown;
}

/** A TestContext that records each step (running it) instead of reporting it. */
function recorder(name: string, steps: Step[]): Deno.TestContext {
  return testContext(name, async (stepName, fn) => {
    try {
      await fn(recorder(stepName, []));
      steps.push({ name: stepName });
      return true;
    } catch (error) {
      steps.push({ name: stepName, error });
      return false;
    }
  });
}

/**
 * Wraps test definitions so that they start at once, at most `limit` at a time, and each
 * test replays its run's steps and outcome when `deno test` reaches it. Ignored definitions
 * stay as they are.
 */
export function prefetched(definitions: Deno.TestDefinition[], limit = 2): Deno.TestDefinition[] {
  const queue = definitions.filter((def) => !def.ignore);
  const runs = new Map<Deno.TestDefinition, Promise<Recorded>>();
  let running = 0;
  const waiting: (() => void)[] = [];
  const slot = async () => {
    while (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
  };
  const free = () => {
    running--;
    waiting.shift()?.();
  };
  for (const def of queue) {
    runs.set(
      def,
      (async () => {
        await slot();
        const steps: Step[] = [];
        try {
          await def.fn(recorder(def.name, steps));
          return { steps };
        } catch (error) {
          return { steps, error };
        } finally {
          free();
        }
      })(),
    );
  }
  return definitions.map((def) => {
    const run = runs.get(def);
    if (!run) return def;
    const { permissions: _ran, ...rest } = def;
    return {
      ...rest,
      async fn(t: Deno.TestContext) {
        const recorded = await run;
        for (const step of recorded.steps) {
          await t.step(step.name, () => {
            if (step.error !== undefined) throw step.error;
          });
        }
        if (recorded.error !== undefined) throw recorded.error;
      },
    };
  });
}
