// The package's public face: what the root module exports, and that it publishes.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("./", import.meta.url));

/** The files below `dir` (from the root: empty or ending in `/`), skipping `.*` and `testdata/`. */
async function* sourceFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory && !entry.name.startsWith(".") && entry.name !== "testdata") {
      yield* sourceFiles(`${path}/`);
    } else if (entry.isFile) yield path;
  }
}
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
  const stray = files.filter((line) => /\/\.cache\/|\/evidence\/|\/\.ci\/|_i?test\.ts /.test(line));
  strictEqual(stray.length, 0, `published but should not be:\n${stray.join("\n")}`);
});

Deno.test("every test file runs in exactly one set, by its name: *_test.ts or *_itest.ts", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("./deno.json", import.meta.url)));
  // deno test -A finds *_test.ts (Deno's own discovery, no list to keep); the integration task
  // names *_itest.ts, which that discovery never matches.
  strictEqual(config.test?.include, undefined, "deno.json keeps a test.include list again");
  ok(
    (config.tasks["test:integration"] as string).trim().endsWith(" '**/*_itest.ts'"),
    "deno task test:integration does not run **/*_itest.ts",
  );
  const strays: string[] = [];
  let tests = 0;
  for await (const path of sourceFiles("")) {
    const name = path.split("/").at(-1)!;
    if (/(_itest|_test)\.ts$/.test(name)) tests++;
    else if (/(^|[._])test\.(ts|js|mjs|mts|tsx|jsx)$/.test(name)) strays.push(path);
  }
  ok(tests > 30, `only ${tests} test files found`);
  strictEqual(strays.length, 0, `test files named outside the convention: ${strays.join(", ")}`);
});

Deno.test("the library's integration set leaves out tools/ and targets/, whose tests never read this process's SQLite, and how answers are read", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("./deno.json", import.meta.url)));
  // CI runs the integration set once more on the fixed SQLite (DENO_SQLITE_PATH); the tools'
  // tests name their libraries (--libraries system) and the peers bring their own engines,
  // so the second pass leaves them out by folder, not by a list. It leaves out the stores
  // that spell their answers otherwise too: what they test is how the cells read an answer,
  // the same on any SQLite (the reference under them is judged on both libraries by the
  // matrix and the controls). The pattern is quoted: the task shell would expand it into
  // file names, and Deno runs a file named even if ignored.
  strictEqual(
    config.tasks["test:integration:library"],
    (config.tasks["test:integration"] as string).replace(
      " '**/*_itest.ts'",
      " --ignore=tools,targets,cells/any_store_itest.ts '**/*_itest.ts'",
    ),
  );
  const readers: string[] = [];
  for (const dir of ["tools/", "targets/"]) {
    for await (const path of sourceFiles(dir)) {
      if (!/_itest\.ts$|_test_helpers\.ts$/.test(path)) continue;
      const text = await Deno.readTextFile(`${ROOT}${path}`);
      if (/DENO_SQLITE_PATH|sqliteLibraryPath|currentLibrary|"current"/.test(text)) {
        readers.push(path);
      }
    }
  }
  deepStrictEqual(
    readers,
    [],
    "these read this process's SQLite: move them out of tools/, targets/",
  );
});
