// The conformance tool's capability probe, run in a child: opens the target's store in a
// folder, writes, and prints one JSON line: its methods, crash points, whether its file
// is SQLite and whether it loaded this project's SQLite library (`DENO_SQLITE_PATH`
// mapped into the process). `scoped`: the cells' children's permissions, so only the
// open and the write are tried. A failure prints the error's name and message.
const [target = "", dir = "", mode = "full"] = Deno.args;
const db = `${dir}/probe.db`;
try {
  const { loadTarget } = await import("../../cells/target.ts");
  const module = await loadTarget(target);
  const store = await module.openStore(db, {});
  await store.createSession("probe");
  await store.appendMessage("probe", { role: "user", content: "probe" });
  const methods: string[] = [];
  for (let o: object | null = store; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (typeof (store as unknown as Record<string, unknown>)[name] === "function") {
        methods.push(name);
      }
    }
  }
  let binding = false;
  let sqliteFile = false;
  if (mode === "full") {
    const library = Deno.env.get("DENO_SQLITE_PATH");
    const maps = Deno.build.os === "linux" ? Deno.readTextFileSync("/proc/self/maps") : "";
    binding = library !== undefined && maps.includes(Deno.realPathSync(library));
  }
  await store.close();
  if (mode === "full") {
    try {
      const head = new Uint8Array(16);
      const file = Deno.openSync(db);
      file.readSync(head);
      file.close();
      sqliteFile = new TextDecoder().decode(head) === "SQLite format 3\0";
    } catch {
      sqliteFile = false; // the store keeps its data elsewhere
    }
  }
  console.log(JSON.stringify({
    ok: true,
    methods: [...new Set(methods)],
    crashPoints: module.crashPoints?.().length ?? 0,
    binding,
    sqliteFile,
  }));
} catch (error) {
  const e = error instanceof Error ? error : new Error(String(error));
  // A permission refusal may sit in the cause chain (e.g. under the target's own error).
  let name = e.name;
  for (let c: unknown = e; c instanceof Error; c = c.cause) {
    if (c.name === "NotCapable" || c.name === "PermissionDenied") name = c.name;
  }
  console.log(JSON.stringify({ ok: false, name, message: e.message.split("\n")[0] }));
}
