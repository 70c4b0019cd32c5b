// The capability probe, run in a child: opens the target's store in a folder, writes,
// and writes one JSON file (the last argument): its methods, crash points, whether its
// file is SQLite (and the version that last wrote it) and whether it loaded this
// project's SQLite library (`DENO_SQLITE_PATH` mapped into the process). `scoped`: the
// cells' children's permissions, so only the open and the write are tried. A failure
// names the step that threw and the store's own error.
const [target = "", dir = "", mode = "full", out = `${dir}/probe.json`] = Deno.args;
const db = `${dir}/probe.db`;
let step = "load the target";
const write = (result: Record<string, unknown>) =>
  Deno.writeTextFileSync(out, JSON.stringify(result) + "\n");
try {
  const { loadTarget } = await import("../cells/target.ts");
  const module = await loadTarget(target);
  step = "openStore";
  const store = await module.openStore(db, {});
  step = "createSession";
  await store.createSession("probe");
  step = "appendMessage";
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
  if (mode === "full") {
    const library = Deno.env.get("DENO_SQLITE_PATH");
    const maps = Deno.build.os === "linux" ? Deno.readTextFileSync("/proc/self/maps") : "";
    binding = library !== undefined && maps.includes(Deno.realPathSync(library));
  }
  step = "close";
  await store.close();
  let sqliteFile = false;
  let sqliteVersion: string | undefined;
  if (mode === "full") {
    try {
      const head = new Uint8Array(100);
      const file = Deno.openSync(db);
      file.readSync(head);
      file.close();
      sqliteFile = new TextDecoder().decode(head.subarray(0, 16)) === "SQLite format 3\0";
      // Bytes 96-99: SQLITE_VERSION_NUMBER of the library that last wrote the file.
      const n = new DataView(head.buffer).getUint32(96);
      if (sqliteFile && n) {
        sqliteVersion = `${Math.floor(n / 1e6)}.${Math.floor(n / 1e3) % 1e3}.${n % 1e3}`;
      }
    } catch {
      sqliteFile = false; // the store keeps its data elsewhere
    }
  }
  write({
    ok: true,
    methods: [...new Set(methods)],
    crashPoints: module.crashPoints?.().length ?? 0,
    binding,
    sqliteFile,
    ...(sqliteVersion ? { sqliteVersion } : {}),
  });
} catch (error) {
  const e = error instanceof Error ? error : new Error(String(error));
  // A permission refusal may sit in the cause chain (e.g. under the target's own error).
  let name = e.name;
  for (let c: unknown = e; c instanceof Error; c = c.cause) {
    if (c.name === "NotCapable" || c.name === "PermissionDenied") name = c.name;
  }
  write({ ok: false, step, name, message: e.message.split("\n")[0] });
}
