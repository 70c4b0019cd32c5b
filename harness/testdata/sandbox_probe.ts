// Tries what a child must not be able to do and prints one JSON line of outcomes.
const [outside, otherRun] = Deno.args;
const outcomes: Record<string, string> = {};
async function attempt(name: string, fn: () => unknown | Promise<unknown>) {
  try {
    await fn();
    outcomes[name] = "allowed";
  } catch (error) {
    outcomes[name] = error instanceof Error ? error.name : String(error);
  }
}
await attempt("writeOutside", () => Deno.writeTextFileSync(`${outside}/escape.txt`, "x"));
await attempt("readOtherRun", () => Deno.readTextFileSync(`${otherRun}/secret.txt`));
await attempt("connect", () => Deno.connect({ hostname: "127.0.0.1", port: 9 }));
await attempt("run", () => new Deno.Command("true").outputSync());
await attempt("envOutsideList", () => Deno.env.get("HOME"));
await attempt("writeRunDir", () => Deno.writeTextFileSync(`${Deno.cwd()}/inside.txt`, "x"));
console.log(JSON.stringify(outcomes));
