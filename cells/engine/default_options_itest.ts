// A user's project imports `mod.ts` by URL under its own compiler options, not ours: a
// scratch project without a deno.json (Deno's defaults: no exactOptionalPropertyTypes,
// no noUncheckedIndexedAccess) must type-check the whole module.
import { ok } from "node:assert/strict";

const MOD = new URL("../../mod.ts", import.meta.url).href;

Deno.test("mod.ts type-checks under Deno's default compiler options", async () => {
  // One folder per checkout, kept between runs: Deno's check cache then answers a repeat
  // run at once, and any change to a source module checks the whole graph again.
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(MOD));
  const id = [...new Uint8Array(digest).slice(0, 6)].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  const dir = `${Deno.env.get("TMPDIR") || "/tmp"}/crash-cells-default-options-${id}`;
  await Deno.mkdir(dir, { recursive: true });
  for (const name of ["deno.json", "deno.jsonc"]) {
    ok(!(await Deno.stat(`${dir}/${name}`).catch(() => null)), `${dir}/${name} must not exist`);
  }
  await Deno.writeTextFile(
    `${dir}/use.ts`,
    `import * as conformance from "${MOD}";\nconsole.log(Object.keys(conformance).length);\n`,
  );
  const env: Record<string, string> = { NO_COLOR: "1" };
  for (const name of ["PATH", "HOME", "DENO_DIR", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["check", "use.ts"],
    cwd: dir,
    clearEnv: true,
    env,
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  ok(out.success, `deno check of a file importing ${MOD} without a deno.json failed:\n${text}`);
});
