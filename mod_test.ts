// The package's public face: what the root module exports, and that it publishes.
import { match, ok, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("./", import.meta.url));
const MAX_ROOT_SYMBOLS = 40;

async function deno(...args: string[]): Promise<{ code: number; stdout: string; out: string }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  const stdout = decoder.decode(output.stdout);
  return { code: output.code, stdout, out: stdout + decoder.decode(output.stderr) };
}

Deno.test(`mod.ts exports at most ${MAX_ROOT_SYMBOLS} symbols, each by name`, async () => {
  const source = await Deno.readTextFile(new URL("./mod.ts", import.meta.url));
  ok(!/export\s*(type\s*)?\*/.test(source), "mod.ts re-exports a whole module (export *)");
  const { code, stdout, out } = await deno("doc", "--json", "mod.ts");
  strictEqual(code, 0, out);
  const doc = JSON.parse(stdout);
  const names: string[] = doc.nodes[new URL("./mod.ts", import.meta.url).href].symbols
    .map((symbol: { name: string }) => symbol.name);
  ok(
    names.length <= MAX_ROOT_SYMBOLS,
    `mod.ts exports ${names.length} symbols (at most ${MAX_ROOT_SYMBOLS}; the rest belong ` +
      `to the ./cells, ./harness and ./session-db subpaths): ${names.join(", ")}`,
  );
  for (const name of ["registerCells", "Store", "StoreOptions", "SessionDB"]) {
    ok(names.includes(name), `mod.ts does not export ${name}`);
  }
});

Deno.test("deno publish --dry-run passes: license, no slow types, no cache or tests", async () => {
  const { code, out } = await deno("publish", "--dry-run", "--allow-dirty");
  strictEqual(code, 0, out);
  match(out, /Success Dry run complete/);
  const files = out.split("\n").filter((line) => line.trim().startsWith("file:///"));
  ok(files.some((line) => line.includes("/LICENSE ")), `LICENSE is not published:\n${out}`);
  ok(files.some((line) => line.includes("/mod.ts ")), `mod.ts is not published:\n${out}`);
  const stray = files.filter((line) => /\/\.cache\/|\/evidence\/|\/\.ci\/|_test\.ts /.test(line));
  strictEqual(stray.length, 0, `published but should not be:\n${stray.join("\n")}`);
});

Deno.test("every test file runs in exactly one set: deno test -A or deno task test:integration", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("./deno.json", import.meta.url)));
  const quick: string[] = config.test.include;
  const integration = (config.tasks["test:integration"] as string).split(/\s+/)
    .filter((arg) => !arg.startsWith("-") && /(\.ts|\/)$/.test(arg));
  const covers = (entries: string[], file: string) =>
    entries.some((entry) => entry.endsWith("/") ? file.startsWith(entry) : file === entry);
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory && !entry.name.startsWith(".") && entry.name !== "testdata") {
        await walk(`${path}/`);
      } else if (entry.isFile && entry.name.endsWith("_test.ts")) files.push(path);
    }
  };
  await walk("");
  ok(files.length > 30, `only ${files.length} test files found`);
  const wrong = files.filter((file) => covers(quick, file) === covers(integration, file));
  strictEqual(wrong.length, 0, `in neither set, or in both: ${wrong.join(", ")}`);
});
