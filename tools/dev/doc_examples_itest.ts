import { deepStrictEqual, match, strictEqual, throws } from "node:assert/strict";
import { missingExamples } from "./doc_examples.ts";
import { runTool } from "../_test_helpers.ts";

Deno.test("missingExamples lists symbols without an @example code block, with their place", () => {
  const example = { kind: "example", doc: "```ts\nconsole.log(1);\n```" };
  const at = (line: number) => ({ filename: "file:///pkg/a.ts", line });
  const doc = {
    nodes: {
      "file:///pkg/mod.ts": {
        symbols: [
          {
            name: "good",
            declarations: [{ kind: "function", location: at(0), jsDoc: { tags: [example] } }],
          },
          { name: "noDoc", declarations: [{ kind: "class", location: at(9) }] },
          {
            name: "prose",
            declarations: [{
              kind: "variable",
              location: at(19),
              jsDoc: { tags: [{ kind: "example", doc: "Call it." }] },
            }],
          },
          {
            name: "paramOnly",
            declarations: [{ kind: "function", jsDoc: { tags: [{ kind: "param" }] } }],
          },
        ],
      },
    },
  };
  deepStrictEqual(missingExamples(doc, "file:///pkg/mod.ts"), [
    { name: "noDoc", kind: "class", location: "file:///pkg/a.ts:10" },
    { name: "prose", kind: "variable", location: "file:///pkg/a.ts:20" },
    { name: "paramOnly", kind: "function", location: "unknown" },
  ]);
  throws(
    () => missingExamples(doc, "file:///pkg/other.ts"),
    /Cannot read the symbols of "file:\/\/\/pkg\/other.ts"/,
  );
});

Deno.test("missingExamples judges a re-export by the declaration it points to", () => {
  const example = { kind: "example", doc: "```ts\nconsole.log(1);\n```" };
  const declared = (line: number, tags: unknown[]) => ({
    kind: "function",
    location: { filename: "file:///pkg/sub/mod.ts", line },
    jsDoc: { tags },
  });
  const reference = (line: number) => ({
    kind: "reference",
    location: { filename: "file:///pkg/mod.ts", line: 0 },
    def: { target: { filename: "file:///pkg/sub/mod.ts", line } },
  });
  const doc = {
    nodes: {
      "file:///pkg/mod.ts": {
        symbols: [
          { name: "good", declarations: [reference(1)] },
          { name: "bare", declarations: [reference(2)] },
          { name: "lost", declarations: [reference(3)] },
        ],
      },
      "file:///pkg/sub/mod.ts": {
        symbols: [
          { name: "good", declarations: [declared(1, [example])] },
          { name: "bare", declarations: [declared(2, [])] },
        ],
      },
    },
  };
  deepStrictEqual(missingExamples(doc, "file:///pkg/mod.ts").map((m) => [m.name, m.kind]), [
    ["bare", "function"],
    ["lost", "reference"],
  ]);
});

Deno.test("tools/dev/doc_examples.ts: --help, and a usage error exits 2", async () => {
  const run = (...args: string[]) =>
    runTool(new URL("./doc_examples.ts", import.meta.url), args, {
      permissions: ["--allow-run", "--allow-read"],
    });
  const help = await run("--help");
  strictEqual(help.code, 0);
  match(help.stdout, /^Usage: deno task doc-examples \[flags\][^]*--modules LIST/);
  const bad = await run("--modules", "no_such.ts");
  strictEqual(bad.code, 2);
  match(bad.stderr, /Invalid --modules: "no_such.ts" is not a file/);
});

Deno.test("tools/dev/doc_examples.ts: every symbol exported from mod.ts has an @example", async () => {
  const run = await runTool(new URL("./doc_examples.ts", import.meta.url), [], {
    permissions: ["--allow-run", "--allow-read"],
  });
  strictEqual(run.code, 0, `doc_examples.ts failed:\n${run.stderr}`);
  match(run.stdout, /all \d+ exported symbols have an @example/);
});
