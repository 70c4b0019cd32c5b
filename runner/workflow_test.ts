// The CI workflow cannot run here: check that it parses (a YAML subset: block mappings,
// block sequences, flow sequences, `>-` folded scalars, comments), that it fans out one
// job per OS × library × leg, and that the artifact layout it downloads is what
// `--merge` takes (merged here from synthetic reports laid out the same way).
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { levelOf } from "./levels.ts";
import { mergeReports, parseReport } from "./merge.ts";
import {
  type ConformanceReport,
  countStatuses,
  REPORT_SCHEMA,
  REPORT_SCHEMA_VERSION,
  type Result,
  TIERS,
} from "./report_schema.ts";

type Yaml = string | Yaml[] | { [key: string]: Yaml };

/** Parses the YAML subset the workflow uses; throws on anything else, naming the line. */
function parseYaml(text: string): Yaml {
  const lines = text.split("\n").map((raw, i) => ({ raw, n: i + 1 }))
    .filter(({ raw }) => raw.trim() && !raw.trim().startsWith("#"));
  let at = 0;
  const indent = (raw: string) => raw.length - raw.trimStart().length;
  const scalar = (value: string): Yaml => {
    const v = value.trim();
    if (v.startsWith("[")) {
      if (!v.endsWith("]")) throw new Error(`unclosed flow sequence: ${v}`);
      return v.slice(1, -1).split(",").map((item) => item.trim()).filter(Boolean);
    }
    return v.replace(/^"(.*)"$/, "$1");
  };
  function block(level: number): Yaml {
    const first = lines[at]!;
    if (first.raw.includes("\t")) throw new Error(`line ${first.n}: tab in indentation`);
    if (first.raw.trimStart().startsWith("- ")) {
      const list: Yaml[] = [];
      while (at < lines.length && indent(lines[at]!.raw) === level) {
        const { raw, n } = lines[at]!;
        const body = raw.trimStart();
        if (!body.startsWith("- ")) throw new Error(`line ${n}: expected "- "`);
        // "- key: value" opens a mapping whose keys sit at level + 2.
        lines[at] = { raw: " ".repeat(level + 2) + body.slice(2), n };
        list.push(/^[\w.-]+:( |$)/.test(body.slice(2)) ? block(level + 2) : scalar(body.slice(2)));
        if (typeof list.at(-1) === "string") at++;
      }
      return list;
    }
    const map: Record<string, Yaml> = {};
    while (at < lines.length && indent(lines[at]!.raw) === level) {
      const { raw, n } = lines[at]!;
      const m = raw.trim().match(/^([\w.-]+):(?: (.*))?$/);
      if (!m) throw new Error(`line ${n}: expected "key: value": ${raw.trim()}`);
      at++;
      const [, key, value] = m;
      if (value === ">-" || value === "|") {
        const parts: string[] = [];
        while (at < lines.length && indent(lines[at]!.raw) > level) {
          parts.push(lines[at++]!.raw.trim());
        }
        map[key!] = parts.join(value === ">-" ? " " : "\n");
      } else if (value !== undefined && value !== "") map[key!] = scalar(value);
      else if (at < lines.length && indent(lines[at]!.raw) > level) {
        map[key!] = block(indent(lines[at]!.raw));
      } else map[key!] = "";
    }
    if (at < lines.length && indent(lines[at]!.raw) > level) {
      throw new Error(`line ${lines[at]!.n}: unexpected indentation`);
    }
    return map;
  }
  const doc = block(0);
  if (at !== lines.length) throw new Error(`line ${lines[at]!.n}: not parsed`);
  return doc;
}

const WORKFLOW = new URL("../.github/workflows/conformance.yml", import.meta.url);
const obj = (y: Yaml | undefined) => y as Record<string, Yaml>;

Deno.test("workflow: parses, fans out OS × library × leg, and merges every artifact", () => {
  const doc = obj(parseYaml(Deno.readTextFileSync(WORKFLOW)));
  const jobs = obj(doc.jobs);
  const matrix = obj(obj(obj(jobs.conformance).strategy).matrix);
  deepStrictEqual(matrix.library, ["system", "fixed"]);
  deepStrictEqual(matrix.leg, ["default", "delete", "wal"]);
  ok((matrix.os as string[]).length >= 2, "more than one OS");
  const steps = obj(jobs.conformance).steps as Record<string, string>[];
  const run = steps.find((s) => s.name === "conformance")!.run!;
  ok(run.startsWith("deno task conformance --target"), run);
  for (const flag of ["--legs ${{ matrix.leg }}", "--libraries ${{ matrix.library }}"]) {
    ok(run.includes(flag), `the job passes ${flag}`);
  }
  ok(run.includes("--machine ${{ matrix.os }}-${{ matrix.library }}-${{ matrix.leg }}"));
  ok(run.includes("--json conformance/report.json"));
  const upload = steps.find((s) => s.uses?.startsWith("actions/upload-artifact"))! as Record<
    string,
    Yaml
  >;
  const uploadWith = obj(upload.with);
  strictEqual(uploadWith.path, "conformance/");
  strictEqual(
    uploadWith.name,
    "conformance-${{ matrix.os }}-${{ matrix.library }}-${{ matrix.leg }}",
  );
  strictEqual(obj(jobs.merge).needs, "conformance");
  const mergeSteps = obj(jobs.merge).steps as Record<string, Yaml>[];
  const download = obj(
    mergeSteps.find((s) => String(s.uses).startsWith("actions/download-artifact"))!.with,
  );
  strictEqual(download.pattern, "conformance-*");
  strictEqual(download.path, "reports");
  const merge = String(mergeSteps.find((s) => s.name === "merge")!.run);
  // The download puts each artifact in reports/<name>/: the glob must reach report.json there.
  ok(merge.includes("--merge reports/*/report.json"), merge);
});

Deno.test("workflow: the YAML subset parser rejects what it does not understand", () => {
  let threw = false;
  try {
    parseYaml("jobs:\n  a: 1\n    b: 2\n");
  } catch (error) {
    threw = /unexpected indentation/.test((error as Error).message);
  }
  ok(threw, "an over-indented key is an error");
});

Deno.test("workflow: the artifact layout merges into one table keyed by machine", async () => {
  const dir = await Deno.makeTempDir();
  const names: string[] = [];
  for (const os of ["ubuntu-24.04", "macos-14"]) {
    for (const leg of ["default", "delete"]) {
      const machine = `${os}-system-${leg}`;
      const results: Result[] = [{
        clause: "1 prefix durability",
        cell: 1,
        tier: "cells",
        leg,
        library: "system",
        observed: "PASS",
        status: "PASS",
      }];
      const tiers = TIERS.map((tier) => ({ tier, status: "RAN" as const, seconds: 1 }));
      const report: ConformanceReport = {
        schema: REPORT_SCHEMA,
        version: REPORT_SCHEMA_VERSION,
        ...levelOf(results, tiers),
        verdict: "PASS",
        target: "file:///w/cells/reference_target.ts",
        date: "2026-01-01T00:00:00Z",
        command: "deno task conformance",
        strict: false,
        quick: false,
        machines: [{ id: machine, os, arch: "x86_64", deno: "2.9.6" }],
        capabilities: {},
        tiers,
        results,
        counts: countStatuses(results),
      };
      const artifact = `${dir}/reports/conformance-${machine}`;
      await Deno.mkdir(artifact, { recursive: true });
      await Deno.writeTextFile(`${artifact}/report.json`, JSON.stringify(report));
      names.push(`${artifact}/report.json`);
    }
  }
  // What the shell's reports/*/report.json expands to.
  const found: string[] = [];
  for await (const entry of Deno.readDir(`${dir}/reports`)) {
    found.push(`${dir}/reports/${entry.name}/report.json`);
  }
  deepStrictEqual(found.sort(), names.sort());
  const merged = mergeReports(
    found.map((path) => parseReport(path, Deno.readTextFileSync(path))),
    "merge",
  );
  await Deno.remove(dir, { recursive: true });
  strictEqual(merged.machines.length, 4);
  strictEqual(new Set(merged.results.map((r) => r.machine)).size, 4);
  strictEqual(merged.verdict, "PASS");
});
