// scopedPermissions under paths Deno's flags cannot name: a comma splits a flag's list and
// has no escape, so the child is granted the nearest folder above it, and still reaches
// its files (a narrower grant failed every cell of a correct store there).
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { scopedPermissions } from "./permissions.ts";

Deno.test("scopedPermissions: a path holding a comma is granted through the folder above it", () => {
  const flags = scopedPermissions({
    read: ["/srv/a,b/run", "/srv/a,b/lib", "/opt/x"],
    write: "/srv/a,b/run",
    ffi: ["/srv/c,d/libsqlite3.so"],
    env: ["HOME"],
  });
  deepStrictEqual(flags.slice(1, 4), [
    "--allow-read=/srv,/opt/x",
    "--allow-write=/srv",
    "--allow-ffi=/srv",
  ]);
});

Deno.test("scopedPermissions: a child under a folder holding a comma reads and writes there", async () => {
  const root = await Deno.makeTempDir();
  const run = `${root}/with,comma/run`;
  await Deno.mkdir(run, { recursive: true });
  const script = `Deno.writeTextFileSync(${JSON.stringify(`${run}/out.txt`)}, "written");` +
    `console.log(Deno.readTextFileSync(${JSON.stringify(`${run}/out.txt`)}));`;
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-config",
      ...scopedPermissions({ read: [run], write: run, ffi: undefined, env: ["HOME"] }),
      `data:application/typescript,${encodeURIComponent(script)}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  strictEqual(new TextDecoder().decode(output.stderr), "");
  strictEqual(new TextDecoder().decode(output.stdout).trim(), "written");
  await Deno.remove(root, { recursive: true });
});
