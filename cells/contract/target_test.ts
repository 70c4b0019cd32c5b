// The target contract: a store lacking a cell's methods gets that cell SKIPPED with a
// reason naming them (an ignored test: never FAILED, never PASSED), CELL_METHODS
// documents exactly what each cell asks for, and a target's childPermissions reach its
// children (exactly those).
import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { spawnChild } from "../../harness/child.ts";
import { currentLeg } from "../../harness/legs.ts";
import { denoCacheDir } from "../../recorder/record.ts";
import { type CellId, CELLS } from "../register.ts";
import { runDefinitions } from "../engine/run_definitions.ts";
import { CELL_METHODS, type StoreMethod, TargetError } from "./target.ts";
import { declaredPermissions, missingPrograms } from "./target_access.ts";

const options = { sanitizeResources: false, sanitizeOps: false };
// The default leg whatever this process runs on: the cases are about methods, not modes.
const leg = { ...currentLeg(), name: "default" as const };
const testTarget = (name: string) => new URL(`../testdata/${name}.ts`, import.meta.url);

/** The methods a cell's skip reason names, or `undefined` when the cell would run. */
async function skipped(target: URL, cell: CellId): Promise<StoreMethod[] | undefined> {
  const definitions = await CELLS[cell]({ target, leg, keepEvidence: false });
  strictEqual(definitions.length, 1);
  const definition = definitions[0]!;
  if (!definition.ignore) return undefined;
  const match = / SKIP: the store lacks (.+)$/.exec(definition.name);
  ok(match, `cell ${cell} is ignored for another reason: ${definition.name}`);
  return match[1]!.split(", ") as StoreMethod[];
}

Deno.test({
  name: "a store without the outbox gets cell 5 SKIPPED, naming the missing methods",
  ...options,
  async fn() {
    const target = testTarget("no_outbox_target");
    const definitions = await CELLS[5]({ target, leg, keepEvidence: false });
    const [outcome] = await runDefinitions(definitions);
    strictEqual(outcome?.status, "SKIP", "cell 5 must be skipped, never passed or failed");
    strictEqual(definitions[0]?.ignore, true, "deno test must report it ignored");
    strictEqual(
      outcome.detail,
      "the store lacks recordObligation, markAttempting, markDelivered, sweepRecoverable, listObligations",
    );
    for (const cell of [1, 2, 3, 4] as const) {
      strictEqual(await skipped(target, cell), undefined, `cell ${cell} must still run`);
    }
  },
});

Deno.test({
  name: "CELL_METHODS names exactly what each cell requires",
  ...options,
  async fn() {
    const core: StoreMethod[] = ["createSession", "appendMessage", "getMessages", "close"];
    const target = testTarget("core_only_target");
    strictEqual(await skipped(target, 1), undefined, "cell 1 needs only the core");
    for (const cell of [2, 3, 4, 5] as const) {
      deepStrictEqual(
        await skipped(target, cell),
        [
          ...CELL_METHODS[cell].filter((m) => !core.includes(m)),
          // Cell 4 tells a missing branch from an empty one by either of these.
          ...(cell === 4 ? ["one of getSession or listSessions"] : []),
        ],
        `cell ${cell}`,
      );
    }
    deepStrictEqual(CELL_METHODS[1], core);
  },
});

const dataModule = (code: string) => `data:application/typescript,${encodeURIComponent(code)}`;
const declaring = (declaration: string) =>
  dataModule(
    `export const openStore = () => ({});\nexport const childPermissions = ${declaration};`,
  );

Deno.test({
  name:
    "a target's childPermissions reach its children, nothing undeclared does, a bad one is refused",
  ...options,
  async fn() {
    const permissions = await declaredPermissions(declaring(
      `({ denoDir }: { denoDir: string }) => ({ env: ["CELLS_DECLARED"], sys: ["hostname"], read: [denoDir], ffi: [denoDir] })`,
    ));
    const cache = denoCacheDir();
    deepStrictEqual(permissions, {
      env: ["CELLS_DECLARED"],
      sys: ["hostname"],
      read: [cache],
      ffi: [cache],
    });
    // Each query is what the child holds; the undeclared variable is set here too.
    const script = dataModule(
      `const q = (d: Deno.PermissionDescriptor) => Deno.permissions.querySync(d).state;
console.log(JSON.stringify({
  value: Deno.env.get("CELLS_DECLARED"),
  env: q({ name: "env", variable: "CELLS_UNDECLARED" }),
  hostname: q({ name: "sys", kind: "hostname" }), cpus: q({ name: "sys", kind: "cpus" }),
  read: q({ name: "read", path: ${
        JSON.stringify(cache)
      } }), readRoot: q({ name: "read", path: "/" }),
  ffi: q({ name: "ffi", path: ${JSON.stringify(cache)} }), net: q({ name: "net" }),
}));`,
    );
    Deno.env.set("CELLS_DECLARED", "passed through");
    Deno.env.set("CELLS_UNDECLARED", "kept out");
    try {
      const runDir = Deno.makeTempDirSync();
      const child = spawnChild({ script, runDir, library: leg.library, permissions: permissions! });
      strictEqual((await child.status).code, 0, child.describe());
      Deno.removeSync(runDir, { recursive: true });
      deepStrictEqual(JSON.parse(child.stdout), {
        value: "passed through",
        env: "prompt",
        hostname: "granted",
        cpus: "prompt",
        read: "granted",
        readRoot: "prompt",
        ffi: "granted",
        net: "prompt",
      });
    } finally {
      Deno.env.delete("CELLS_DECLARED");
      Deno.env.delete("CELLS_UNDECLARED");
    }
    for (
      const [declaration, problem] of [
        [
          `{ net: true }`,
          `"net" cannot be declared: the cells never grant the network (remove "net")`,
        ],
        [`{ sys: "yes" }`, `sys must be true, false or a list of sys kinds, got "yes"`],
        [`{ ffi: ["addon"] }`, `ffi must be a list of absolute paths, got ["addon"]`],
        [`{ reads: [] }`, `unknown permission "reads" (use env, sys, ffi, read, run, signals)`],
        [`{ signals: "yes" }`, `signals must be true or false, got "yes"`],
        [`{ run: "python3" }`, `run must be a list of program names or absolute paths`],
        [`{ run: ["./worker"] }`, `run entry "./worker" is a relative path`],
        [`{ run: ["sh"] }`, `run entry "sh" is a shell or a launcher (sh)`],
        [`{ run: ["/bin/bash"] }`, `run entry "/bin/bash" is a shell or a launcher (bash)`],
        [`{ run: ["env"] }`, `run entry "env" is a shell or a launcher (env)`],
      ]
    ) {
      const target = declaring(declaration!);
      await rejects(declaredPermissions(target), (error: Error) => {
        ok(error instanceof TargetError, String(error));
        ok(
          error.message.startsWith(`Invalid childPermissions in target module "${target}": `) &&
            error.message.includes(problem!),
          error.message,
        );
        return true;
      });
    }
  },
});

Deno.test({
  name: "a target's run declaration grants exactly the named programs; a missing one is named",
  ...options,
  async fn() {
    const target = declaring(`{ run: ["sleep", "no-such-program-of-the-cells"] }`);
    const permissions = await declaredPermissions(target);
    const sleep = permissions?.run?.[0] ?? "";
    ok(sleep.startsWith("/") && sleep.endsWith("/sleep"), `resolved on PATH: ${sleep}`);
    deepStrictEqual(permissions, { run: [sleep] });
    deepStrictEqual(await missingPrograms(target), ["no-such-program-of-the-cells"]);
    const script = dataModule(
      `const q = (command: string) => Deno.permissions.querySync({ name: "run", command }).state;
console.log(JSON.stringify({ sleep: q(${JSON.stringify(sleep)}), other: q("true") }));`,
    );
    const runDir = Deno.makeTempDirSync();
    const child = spawnChild({ script, runDir, library: leg.library, permissions: permissions! });
    strictEqual((await child.status).code, 0, child.describe());
    Deno.removeSync(runDir, { recursive: true });
    deepStrictEqual(JSON.parse(child.stdout), { sleep: "granted", other: "prompt" });
  },
});

Deno.test({
  name: "a target whose program this machine lacks gets every cell SKIPPED, naming it",
  ...options,
  async fn() {
    const target = declaring(`{ run: ["no-such-program-of-the-cells"] }`);
    for (const cell of [1, 2] as const) {
      const [definition] = await CELLS[cell]({ target, leg, keepEvidence: false });
      strictEqual(definition?.ignore, true, definition?.name);
      ok(
        definition!.name.endsWith(
          "SKIP: the store needs no-such-program-of-the-cells, not found on this machine's PATH",
        ),
        definition!.name,
      );
    }
  },
});
