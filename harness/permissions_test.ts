// scopedPermissions under paths Deno's flags cannot name: a comma splits a flag's list and
// has no escape, so the child is granted the nearest folder above it, and still reaches
// its files (a narrower grant failed every cell of a correct store there).
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { scopedPermissions, widenedFlags } from "./permissions.ts";

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

// Deno lets a process signal another (Deno.kill) only under an unscoped --allow-run: a
// store's liveness check of a lock holder needs exactly that, and a program list is not it.
Deno.test("scopedPermissions: signals grant an unscoped --allow-run, a program list a scoped one", () => {
  const scope = { read: ["/r"], write: "/r", ffi: undefined, env: [] };
  ok(
    scopedPermissions({ ...scope, run: ["/usr/bin/python3"] }).includes(
      "--allow-run=/usr/bin/python3",
    ),
  );
  ok(
    scopedPermissions({ ...scope, run: ["/usr/bin/python3"], signals: true }).includes(
      "--allow-run",
    ),
  );
  ok(!scopedPermissions(scope).some((flag) => flag.startsWith("--allow-run")));
  deepStrictEqual(widenedFlags({ signals: true, run: ["/usr/bin/python3"] }), ["--allow-run"]);
});

Deno.test("scopedPermissions: a child granted signals may Deno.kill its parent; one without may not", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const script = `${dir}/signal.ts`;
    Deno.writeTextFileSync(
      script,
      `try { Deno.kill(Deno.ppid, "SIGCONT"); console.log("sent"); } catch (e) { console.log(e.name); }`,
    );
    const scope = { read: [dir], write: dir, ffi: undefined, env: ["HOME"] };
    const run = async (signals: boolean) => {
      const args = ["run", ...scopedPermissions({ ...scope, signals }), script];
      const out = await new Deno.Command(Deno.execPath(), { args, stderr: "inherit" }).output();
      return new TextDecoder().decode(out.stdout).trim();
    };
    strictEqual(await run(true), "sent");
    strictEqual(await run(false), "NotCapable");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
