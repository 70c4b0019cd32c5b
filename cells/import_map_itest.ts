// A project whose target relies on its deno.json import map: `deno test` there must
// pass, with the cells' children resolving the target through the same import map.
import { ok } from "node:assert/strict";
import { join } from "node:path";
import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
import { testFolder } from "../internal/_test_folder.ts";

Deno.test("a target that relies on its project's import map runs in the cells' children", async () => {
  const project = testFolder({ prefix: "import-map-project-" });
  try {
    const sessionDb = new URL("../session_db/mod.ts", import.meta.url).href;
    const cells = new URL("./mod.ts", import.meta.url).href;
    await Deno.writeTextFile(
      join(project, "deno.json"),
      JSON.stringify({ imports: { "my-store-lib": sessionDb, "session-cells": cells } }),
    );
    await Deno.writeTextFile(
      join(project, "target.ts"),
      `import { SessionDB } from "my-store-lib";\n` +
        `export function openStore(path: string, options: { journalMode?: "wal" | "delete" }) {\n` +
        `  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});\n` +
        `}\n`,
    );
    await Deno.writeTextFile(
      join(project, "conformance_test.ts"),
      `import { prefixDurabilityCell } from "session-cells";\n` +
        `const target = new URL("./target.ts", import.meta.url);\n` +
        `for (const t of await prefixDurabilityCell({ target, rounds: 1 })) Deno.test(t);\n`,
    );
    const env: Record<string, string> = { DENO_SQLITE_PATH: sqliteLibraryPath(), NO_COLOR: "1" };
    for (const name of ["PATH", "HOME", "DENO_DIR"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["test", "--no-lock", "--no-check", "-A", "conformance_test.ts"],
      cwd: project,
      clearEnv: true,
      env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    ok(out.success, text);
    ok(/ok \| 1 passed/.test(text), text);
  } finally {
    await Deno.remove(project, { recursive: true });
  }
});
