// Tries what it is told and prints one JSON array of outcomes: "allowed", or the
// error's name (NotCapable when a permission refused it).
//
// Usage: sandbox_probe.ts '[["read", "<path>"], ["write", "<path>"], ["connect", "<host:port>"],
//   ["listen", "<port>"], ["run", "<command>"], ["env", "<name>"], ["ffi", "<library>"]]'
const attempts: Record<string, (arg: string) => unknown | Promise<unknown>> = {
  read: (path) => Deno.readFileSync(path),
  write: (path) => Deno.writeTextFileSync(path, "x"),
  connect: async (address) => {
    const [hostname, port] = address.split(":");
    (await Deno.connect({ hostname: hostname!, port: Number(port) })).close();
  },
  listen: (port) => Deno.listen({ hostname: "127.0.0.1", port: Number(port) }).close(),
  run: (command) => new Deno.Command(command).outputSync(),
  env: (name) => Deno.env.get(name),
  ffi: (library) => Deno.dlopen(library, {}).close(),
};

const outcomes: string[] = [];
for (const [action, arg] of JSON.parse(Deno.args[0] ?? "[]") as [string, string][]) {
  try {
    await attempts[action]!(arg);
    outcomes.push("allowed");
  } catch (error) {
    outcomes.push(error instanceof Error ? error.name : String(error));
  }
}
console.log(JSON.stringify(outcomes));
