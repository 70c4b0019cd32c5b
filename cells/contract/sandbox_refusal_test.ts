// A permission Deno refused a store in a scoped child is the sandbox's doing: the child
// records it and exits with its own code, and the run reads it back as an ERROR's reason.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  endIfRefused,
  findSandboxRefusals,
  isSandboxRefusal,
  readSandboxRefusals,
  refusalReason,
  SANDBOX_REFUSALS_ENV,
  SANDBOX_REFUSED_EXIT,
  sandboxRefusalsFile,
} from "./sandbox_refusal.ts";

Deno.test("isSandboxRefusal: Deno's refusal, also wrapped, never an OS permission error", () => {
  ok(isSandboxRefusal(new Deno.errors.NotCapable("Requires run access")));
  ok(isSandboxRefusal(new Error("lock check failed", { cause: new Deno.errors.NotCapable("x") })));
  ok(isSandboxRefusal(new Error('Requires read access to "/proc/7", run again with --allow-read')));
  ok(!isSandboxRefusal(new Deno.errors.PermissionDenied("Permission denied (os error 13)")));
  ok(!isSandboxRefusal(new Error("database is locked")));
  ok(!isSandboxRefusal("Requires run access"));
});

Deno.test("endIfRefused: a scoped child records the refusal and exits 77; elsewhere it returns", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const script = `${dir}/child.ts`;
    Deno.writeTextFileSync(
      script,
      `import { endIfRefused } from ${JSON.stringify(import.meta.resolve("./sandbox_refusal.ts"))};
endIfRefused("tryAcquireCompressionLock", new Error("database is locked"));
endIfRefused("tryAcquireCompressionLock", new Deno.errors.NotCapable("Requires run access, run again with the --allow-run flag"));
console.log("not ended");`,
    );
    const file = sandboxRefusalsFile(dir);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        `--allow-read=${dir},${new URL(".", import.meta.url).pathname}`,
        `--allow-write=${dir}`,
        `--allow-env=${SANDBOX_REFUSALS_ENV}`,
        script,
      ],
      env: { [SANDBOX_REFUSALS_ENV]: file },
    }).output();
    strictEqual(out.code, SANDBOX_REFUSED_EXIT, new TextDecoder().decode(out.stderr));
    strictEqual(new TextDecoder().decode(out.stdout), "");
    const [refusal, ...rest] = readSandboxRefusals(file);
    deepStrictEqual(rest, []);
    strictEqual(refusal?.call, "tryAcquireCompressionLock");
    strictEqual(refusal?.name, "NotCapable");
    // Without the variable (the parent, a child with every permission) it only returns.
    endIfRefused("appendMessage", new Deno.errors.NotCapable("Requires run access"));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("findSandboxRefusals: the run folder and its children's folders, a torn line skipped", () => {
  const root = Deno.makeTempDirSync();
  try {
    const line = (call: string) =>
      JSON.stringify({ pid: 1, call, name: "NotCapable", message: "Requires env access" });
    Deno.writeTextFileSync(sandboxRefusalsFile(root), `${line("openStore")}\n{"pid":`);
    Deno.mkdirSync(`${root}/ack/db`, { recursive: true });
    Deno.writeTextFileSync(sandboxRefusalsFile(`${root}/ack`), `${line("appendMessage")}\n`);
    Deno.mkdirSync(`${root}/a/b/c/d/e`, { recursive: true });
    Deno.writeTextFileSync(sandboxRefusalsFile(`${root}/a/b/c/d/e`), `${line("too deep")}\n`);
    deepStrictEqual(findSandboxRefusals(root).map((r) => r.call), ["openStore", "appendMessage"]);
    const reason = refusalReason(findSandboxRefusals(root));
    ok(reason.includes("openStore threw NotCapable: Requires env access (2 refusal(s))"), reason);
    ok(reason.includes("env: [...]"), reason);
    const proc = refusalReason([{
      pid: 1,
      call: "tryAcquireCompressionLock",
      name: "NotCapable",
      message: 'Requires all access to "/proc/4396", run again with the --allow-all flag',
    }]);
    ok(proc.includes("no declaration grants every permission"), proc);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});
