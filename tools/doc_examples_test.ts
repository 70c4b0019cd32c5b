import { deepStrictEqual, match, strictEqual, throws } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { missingExamples } from "./doc_examples.ts";

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

Deno.test("tools/doc_examples.ts: every symbol exported from mod.ts has an @example", async () => {
  const script = fileURLToPath(new URL("./doc_examples.ts", import.meta.url));
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-run", "--allow-read", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(output.stderr);
  strictEqual(output.code, 0, `doc_examples.ts failed:\n${stderr}`);
  match(new TextDecoder().decode(output.stdout), /all \d+ exported symbols have an @example/);
});
