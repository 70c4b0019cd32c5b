// A TestContext outside `deno test`: its steps go to a function of the caller's.

/** Runs one step: its name and body, with a context of its own for nested steps. */
export type StepRunner = (
  name: string,
  fn: (t: Deno.TestContext) => unknown,
) => Promise<boolean>;

/** A minimal TestContext named `name` whose `step` calls `runStep` with the step's name and body. */
export function testContext(name: string, runStep: StepRunner): Deno.TestContext {
  return {
    name,
    origin: import.meta.url,
    parent: undefined,
    step(
      nameOrDef: string | Deno.TestStepDefinition | ((t: Deno.TestContext) => unknown),
      maybeFn?: (t: Deno.TestContext) => unknown,
    ): Promise<boolean> {
      if (typeof nameOrDef === "string") return runStep(nameOrDef, maybeFn!);
      return runStep(nameOrDef.name, typeof nameOrDef === "function" ? nameOrDef : nameOrDef.fn);
    },
  } as unknown as Deno.TestContext;
}
