/**
 * Checks that every symbol exported from `mod.ts` has JSDoc with an `@example` holding
 * a fenced code block: runs `deno doc --json mod.ts` once and lists the symbols that do
 * not. Exits 1 when any is missing, 0 otherwise. (`deno doc --lint` checks that JSDoc
 * exists, not that it has an example; `deno check --doc` type-checks the examples.)
 *
 * Run with `deno run --allow-run --allow-read tools/doc_examples.ts`.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

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

interface DocDeclaration {
  kind?: string;
  location?: { filename: string; line: number };
  jsDoc?: { tags?: DocTag[] };
}

interface DocSymbol {
  name: string;
  declarations?: DocDeclaration[];
}

const ROOT_URL = new URL("../", import.meta.url);
const MOD_URL = new URL("mod.ts", ROOT_URL);

function relative(filename: string): string {
  return filename.startsWith(ROOT_URL.href) ? filename.slice(ROOT_URL.href.length) : filename;
}

/**
 * The symbols of one module of `deno doc --json` output whose first declaration (the
 * one `deno doc` renders) has no `@example` tag with a fenced code block.
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
  const out: MissingExample[] = [];
  for (const symbol of symbols) {
    const declaration = symbol.declarations?.[0];
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
 * Runs `deno doc --json` on the package's `mod.ts` and returns what lacks an example.
 *
 * @returns The exported symbols without an example, and how many were checked.
 * @throws {Error} When `deno doc` fails.
 * @example
 * ```ts
 * import { checkDocExamples } from "./doc_examples.ts";
 * const { checked, missing } = await checkDocExamples();
 * console.log(`${checked - missing.length}/${checked} have an example`);
 * ```
 */
export async function checkDocExamples(): Promise<{ checked: number; missing: MissingExample[] }> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", fileURLToPath(MOD_URL)],
    cwd: fileURLToPath(ROOT_URL),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(
      `Cannot run deno doc --json mod.ts: it exited with code ${output.code}: ${
        new TextDecoder().decode(output.stderr).trim()
      }`,
    );
  }
  const doc = JSON.parse(new TextDecoder().decode(output.stdout));
  const missing = missingExamples(doc, MOD_URL.href);
  const checked = (doc.nodes[MOD_URL.href].symbols as unknown[]).length;
  return { checked, missing };
}

if (import.meta.main) {
  const { checked, missing } = await checkDocExamples();
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
