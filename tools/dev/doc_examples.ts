/**
 * Checks that every symbol exported from `mod.ts` has JSDoc with an `@example` holding
 * a fenced code block: runs `deno doc --json mod.ts` once and lists the symbols that do
 * not. Exits 1 when any is missing, 0 otherwise. (`deno doc --lint` checks that JSDoc
 * exists, not that it has an example; `deno check --doc` type-checks the examples.)
 *
 * Run with `deno task doc-examples` (flags and exit codes: `--help`,
 * {@linkcode DOC_EXAMPLES_CLI}).
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import { fail, parseFlags, type ToolSpec } from "../_cli.ts";

/** The check's command line (its `--help`). */
export const DOC_EXAMPLES_CLI: ToolSpec = {
  usage: "deno task doc-examples",
  summary: `Checks that every symbol a module exports has JSDoc with an @example holding a
fenced code block (deno doc --lint checks that JSDoc exists, not that it has an example),
and lists those that do not, with where each is declared.`,
  flags: [{
    name: "--modules",
    value: "LIST",
    help: "the modules to check, relative to the package root",
    default: "mod.ts,runner/mod.ts",
  }],
  exitCodes: { 0: "every exported symbol has an example", 1: "some lack one (listed)" },
};

/** A symbol of `deno doc --json` that lacks an example. */
export interface MissingExample {
  /** The exported name. */
  name: string;
  /** The declaration's kind (`function`, `class`, `interface`, …). */
  kind: string;
  /** Where it is declared, `path:line` relative to the package root. */
  location: string;
}

interface DocTag {
  kind: string;
  doc?: string;
}

interface DocLocation {
  filename: string;
  line: number;
}

interface DocDeclaration {
  kind?: string;
  location?: DocLocation;
  jsDoc?: { tags?: DocTag[] };
  /** A `reference` (a re-export, when several modules are documented at once): its target. */
  def?: { target?: DocLocation };
}

interface DocSymbol {
  name: string;
  declarations?: DocDeclaration[];
}

const ROOT_URL = new URL("../../", import.meta.url);

function relative(filename: string): string {
  return filename.startsWith(ROOT_URL.href) ? filename.slice(ROOT_URL.href.length) : filename;
}

const at = (where: DocLocation): string => `${where.filename}:${where.line}`;

/**
 * The symbols of one module of `deno doc --json` output whose first declaration (the
 * one `deno doc` renders) has no `@example` tag with a fenced code block. When several
 * modules were documented at once, a symbol two of them export is declared in one and
 * is a `reference` in the other: the reference is judged by the declaration it points to.
 *
 * @param doc The parsed output of `deno doc --json` (format version 2: `nodes` by URL).
 * @param module The module's URL, e.g. `file:///…/mod.ts`.
 * @returns The symbols lacking an example, in the order `deno doc` lists them.
 * @throws {Error} When the output has no entry for `module`.
 * @example
 * ```ts
 * import { missingExamples } from "./doc_examples.ts";
 * const doc = { nodes: { "file:///m.ts": { symbols: [{ name: "x", declarations: [{}] }] } } };
 * console.log(missingExamples(doc, "file:///m.ts").map((m) => m.name)); // ["x"]
 * ```
 */
export function missingExamples(doc: unknown, module: string): MissingExample[] {
  const nodes = (doc as { nodes?: Record<string, { symbols?: DocSymbol[] }> }).nodes;
  const symbols = nodes?.[module]?.symbols;
  if (!Array.isArray(symbols)) {
    throw new Error(
      `Cannot read the symbols of "${module}" from deno doc --json: no such module in its output (check the Deno version prints format 2)`,
    );
  }
  const declared = new Map<string, DocDeclaration>();
  for (const node of Object.values(nodes ?? {})) {
    for (const { declarations } of node.symbols ?? []) {
      const first = declarations?.[0];
      if (first?.location && first.kind !== "reference") declared.set(at(first.location), first);
    }
  }
  const out: MissingExample[] = [];
  for (const symbol of symbols) {
    let declaration = symbol.declarations?.[0];
    const target = declaration?.kind === "reference" ? declaration.def?.target : undefined;
    if (target) declaration = declared.get(at(target)) ?? declaration;
    const tags = declaration?.jsDoc?.tags ?? [];
    if (tags.some((tag) => tag.kind === "example" && (tag.doc ?? "").includes("```"))) continue;
    const where = declaration?.location;
    out.push({
      name: symbol.name,
      kind: declaration?.kind ?? "unknown",
      location: where ? `${relative(where.filename)}:${where.line + 1}` : "unknown",
    });
  }
  return out;
}

/**
 * Runs `deno doc --json` on modules of the package (default: its `mod.ts`) and returns
 * what lacks an example.
 *
 * @param modules The modules, relative to the package root.
 * @returns The exported symbols without an example, and how many were checked.
 * @throws {Error} When `deno doc` fails.
 * @example
 * ```ts
 * import { checkDocExamples } from "./doc_examples.ts";
 * const { checked, missing } = await checkDocExamples();
 * console.log(`${checked - missing.length}/${checked} have an example`);
 * ```
 */
export async function checkDocExamples(
  modules: readonly string[] = ["mod.ts"],
): Promise<{ checked: number; missing: MissingExample[] }> {
  const urls = modules.map((module) => new URL(module, ROOT_URL));
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", ...urls.map((url) => fileURLToPath(url))],
    cwd: fileURLToPath(ROOT_URL),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(
      `Cannot run deno doc --json ${modules.join(" ")}: it exited with code ${output.code}: ${
        new TextDecoder().decode(output.stderr).trim()
      }`,
    );
  }
  const doc = JSON.parse(new TextDecoder().decode(output.stdout));
  let checked = 0;
  const missing: MissingExample[] = [];
  for (const url of urls) {
    missing.push(...missingExamples(doc, url.href));
    checked += (doc.nodes[url.href].symbols as unknown[]).length;
  }
  return { checked, missing };
}

if (import.meta.main) {
  const modules = parseFlags(DOC_EXAMPLES_CLI, Deno.args).list("--modules") ??
    ["mod.ts", "runner/mod.ts"];
  if (!modules.length) fail("Invalid --modules: name at least one module, e.g. mod.ts");
  const isFile = (module: string) => {
    try {
      return Deno.statSync(new URL(module, ROOT_URL)).isFile;
    } catch {
      return false;
    }
  };
  for (const module of modules.filter((module) => !isFile(module))) {
    fail(`Invalid --modules: "${module}" is not a file under ${fileURLToPath(ROOT_URL)}`);
  }
  const { checked, missing } = await checkDocExamples(modules);
  if (missing.length === 0) {
    console.log(`doc examples: all ${checked} exported symbols have an @example`);
  } else {
    console.error(
      `doc examples: ${missing.length} of ${checked} exported symbols have no @example with a code block (add one to each JSDoc):`,
    );
    for (const m of missing) console.error(`  ${m.name} (${m.kind}) at ${m.location}`);
    Deno.exit(1);
  }
}
