/**
 * The report's three forms: JSON (the schema in report_schema.ts), Markdown (a table a
 * maintainer pastes into an issue) and JUnit XML (for CI dashboards); and the one
 * shortener of a reason to a line ({@linkcode oneLine}) every table uses.
 *
 * @example
 * ```ts
 * import { oneLine } from "./report_formats.ts";
 * console.log(oneLine("Failed check(s):\nlost m3\nlost m4", 20)); // "lost m3 | lost m4"
 * ```
 *
 * @module
 */
import type { StoreEngine } from "../cells/engine/report.ts";
import type { Capabilities, ConformanceReport, Result } from "./report_schema.ts";
import { RESULT_STATUSES } from "./report_schema.ts";

/** What a report says of a verdict reached under `--quick` (short spans, fewer states). */
export const QUICK_NOTE = "--quick: a smoke run, the full run gives the verdict";

const cellText = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

/**
 * A reason on one line: its lines trimmed and joined with ` | ` (a leading `Failed
 * check(s):` heading dropped), cut to `limit` characters with an ellipsis.
 *
 * @param text The reason.
 * @param limit The longest result.
 * @returns The line.
 * @example
 * ```ts
 * import { oneLine } from "./report_formats.ts";
 * console.log(oneLine("a\nb", 80)); // "a | b"
 * ```
 */
export function oneLine(text: string, limit = 160): string {
  const line = text.replace(/^Failed check\(s\):\n/, "").split("\n").map((l) => l.trim())
    .filter(Boolean).join(" | ");
  return line.length > limit ? `${line.slice(0, Math.max(0, limit - 1))}…` : line;
}

const shorten = oneLine;

/**
 * How a result shows in the Markdown table: `SKIP (reason)`, `XFAIL (reason, link)`, …
 *
 * @param r The result.
 * @returns Its cell text.
 * @example
 * ```ts
 * import { statusText } from "./report_formats.ts";
 * console.log(statusText({ clause: "1", tier: "cells", leg: "wal", library: "system", observed: "SKIP", status: "SKIP", reason: "not honoured" }));
 * // "SKIP (not honoured)"
 * ```
 */
export function statusText(r: Result): string {
  if (r.status === "SKIP" || r.status === "FAIL" || r.status === "ERROR") {
    return r.reason ? `${r.status} (${shorten(r.reason, 120)})` : r.status;
  }
  if (r.expectation && (r.status === "XFAIL" || r.status === "XPASS")) {
    const link = r.expectation.link ? `, ${r.expectation.link}` : "";
    return `${r.status} (${shorten(r.expectation.reason, 100)}${link})`;
  }
  return r.status;
}

/**
 * The Markdown report: verdict, level, capabilities, the clause × tier × leg table, failures.
 *
 * @param report The report.
 * @returns Its Markdown.
 * @example
 * ```ts ignore
 * import { markdownReport } from "./report_formats.ts";
 * const report = JSON.parse(Deno.readTextFileSync(".cache/conformance/report.json"));
 * console.log(markdownReport(report));
 * ```
 */
export function markdownReport(report: ConformanceReport): string {
  const merged = report.machines.length > 1;
  const lines: string[] = [
    `## Conformance: ${report.target}`,
    "",
    `**${report.verdict}**${
      report.why ? ` (${cellText(report.why)})` : ""
    }, level **${report.level}**${report.next ? ` (next: ${report.next.level})` : ""}${
      report.quick ? ` (${QUICK_NOTE})` : ""
    }; ${RESULT_STATUSES.map((s) => `${report.counts[s]} ${s}`).join(", ")}.`,
    "",
    `Command: \`${report.command}\` · ${report.date} · machines: ${
      report.machines.map((m) => `${m.id} (${m.os}/${m.arch}, Deno ${m.deno})`).join(", ")
    }${report.expectations ? ` · expectations: \`${report.expectations}\`` : ""}`,
    "",
  ];
  if (report.next) {
    lines.push(`Missing for ${report.next.level}:`, "");
    for (const m of report.next.missing.slice(0, 12)) lines.push(`- ${cellText(m)}`);
    if (report.next.missing.length > 12) {
      lines.push(`- … ${report.next.missing.length - 12} more (see the JSON report)`);
    }
    lines.push("");
  }
  for (const [machine, caps] of Object.entries(report.capabilities)) {
    const cells = Object.entries(caps.cells).filter(([, c]) => c.available).map(([id]) => id);
    lines.push(
      `Capabilities${merged ? ` on ${machine}` : ""}: cells ${
        cells.join(", ") || "none"
      }; ${caps.crashPoints} crash points; legs honoured ${
        caps.legsHonoured.join(", ") || "none"
      }; ${caps.sqliteFile ? "SQLite file" : "not an SQLite file"}; ${
        engineText(caps.engine)
      }; recorder ${caps.recorder.ok ? "available" : `unavailable (${caps.recorder.reason})`}${
        widenedNote(caps)
      }${caps.scopedChildren ? `; scoped children: ${caps.scopedChildren}` : ""}`,
    );
  }
  lines.push("");
  const head = ["clause", "tier", "leg", "library", ...(merged ? ["machine"] : []), "result"];
  lines.push(`| ${head.join(" | ")} |`, `| ${head.map(() => "---").join(" | ")} |`);
  for (const r of report.results) {
    const row = [r.clause, r.tier, r.leg, r.library, ...(merged ? [r.machine ?? ""] : [])];
    lines.push(`| ${[...row, statusText(r)].map(cellText).join(" | ")} |`);
  }
  const failures = report.results.filter((r) =>
    r.status === "FAIL" || r.status === "ERROR" || r.status === "XFAIL" || r.status === "XPASS"
  );
  if (failures.length) {
    lines.push("", "### Failures and expectations", "");
    for (const r of failures) {
      lines.push(
        `- **${r.status}** ${r.clause} · ${r.tier} · ${r.leg} × ${r.library}${
          r.machine ? ` · ${r.machine}` : ""
        }${r.seed !== undefined ? ` · seed ${r.seed}` : ""}`,
      );
      if (r.reason) lines.push(`  - why: ${cellText(shorten(r.reason, 400))}`);
      for (const check of r.checks?.slice(0, 8) ?? []) {
        lines.push(`  - check: ${cellText(shorten(check, 300))}`);
      }
      for (const d of r.diagnoses ?? []) {
        lines.push(`  - cause: ${cellText(d.cause)}; fix: ${cellText(d.fix)}`);
      }
      if (r.evidence) lines.push(`  - evidence: \`${r.evidence}\``);
      if (r.replay) lines.push(`  - replay: \`${r.replay}\``);
    }
  }
  const skipped = report.tiers.filter((t) => t.status === "SKIP");
  if (skipped.length) {
    lines.push("", "### Tiers skipped", "");
    for (const t of skipped) {
      lines.push(`- ${t.tier}${t.machine ? ` (${t.machine})` : ""}: ${cellText(t.reason ?? "?")}`);
    }
  }
  return lines.join("\n") + "\n";
}

const xml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    // XML 1.0 forbids most control characters, which children's stderr may hold.
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, "");

/**
 * The JUnit XML report: a test suite per tier, a test case per result; FAIL and XPASS
 * (under strict) are failures, ERROR an error, SKIP is skipped, XFAIL passes with its
 * expectation.
 *
 * @param report The report.
 * @returns Its XML.
 * @example
 * ```ts ignore
 * import { junitReport } from "./report_formats.ts";
 * const report = JSON.parse(Deno.readTextFileSync(".cache/conformance/report.json"));
 * Deno.writeTextFileSync("conformance.xml", junitReport(report));
 * ```
 */
export function junitReport(report: ConformanceReport): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const failing = (r: Result) =>
    r.status === "FAIL" || r.status === "ERROR" || (report.strict && r.status === "XPASS");
  out.push(
    `<testsuites name="conformance ${
      xml(report.target)
    }" tests="${report.results.length}" failures="${report.results.filter(failing).length}">`,
  );
  const tiers = [...new Set(report.results.map((r) => r.tier))];
  for (const tier of tiers) {
    const cases = report.results.filter((r) => r.tier === tier);
    out.push(
      `  <testsuite name="${tier}" tests="${cases.length}" failures="${
        cases.filter(failing).length
      }" skipped="${cases.filter((r) => r.status === "SKIP").length}">`,
    );
    for (const r of cases) {
      const name = `${r.clause} [${r.leg} × ${r.library}${r.machine ? ` · ${r.machine}` : ""}]`;
      const time = r.seconds !== undefined ? ` time="${r.seconds.toFixed(1)}"` : "";
      out.push(`    <testcase classname="${tier}" name="${xml(name)}"${time}>`);
      if (failing(r)) {
        const message = r.status === "XPASS"
          ? `XPASS: expected to fail (${r.expectation?.reason ?? "?"}) but passed`
          : shorten(r.reason ?? "failed", 300);
        const body = [
          r.reason,
          ...(r.diagnoses ?? []).map((d) => `cause: ${d.cause}; fix: ${d.fix}`),
          r.evidence && `evidence: ${r.evidence}`,
          r.replay &&
          `replay: ${r.replay}`,
        ].filter(Boolean).join("\n");
        const tag = r.status === "ERROR" ? "error" : "failure";
        out.push(`      <${tag} message="${xml(message)}">${xml(body)}</${tag}>`);
      } else if (r.status === "SKIP") {
        out.push(`      <skipped message="${xml(shorten(r.reason ?? "skipped", 300))}"/>`);
      } else if (r.status === "XFAIL" || r.status === "XPASS") {
        out.push(`      <system-out>${xml(statusText(r))}</system-out>`);
      }
      out.push("    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return out.join("\n") + "\n";
}

/**
 * Writes the three forms; each path's folder is created.
 *
 * @param report The report.
 * @param paths Where each form goes.
 */
export async function writeReports(
  report: ConformanceReport,
  paths: { json: string; markdown: string; junit: string },
): Promise<void> {
  const write = async (path: string, text: string) => {
    await Deno.mkdir(path.replace(/\/[^/]*$/, "") || ".", { recursive: true });
    await Deno.writeTextFile(path, text);
  };
  await write(paths.json, JSON.stringify(report, null, 2) + "\n");
  await write(paths.markdown, markdownReport(report));
  await write(paths.junit, junitReport(report));
}

/**
 * What the store runs on, as the report and the console say it.
 *
 * @param e The engine.
 * @returns E.g. `its own SQLite (3.45.1)`.
 * @example
 * ```ts
 * import { engineText } from "./report_formats.ts";
 * console.log(engineText({ kind: "own-sqlite", sqliteVersion: "3.45.1" })); // "its own SQLite (3.45.1)"
 * ```
 */
export function engineText(e: StoreEngine): string {
  const version = e.sqliteVersion ? ` (${e.sqliteVersion})` : "";
  return e.kind === "binding"
    ? "this project's binding"
    : e.kind === "own-sqlite"
    ? `its own SQLite${version}`
    : e.kind === "not-sqlite"
    ? "no SQLite"
    : "an engine not observed (the store did not open)";
}

/**
 * The report's and the console's note of the permissions the target's children got
 * beyond the narrow scope: a user must see that the target asked for more.
 *
 * @param caps The capabilities.
 * @returns The note, or "" when the target declared none.
 */
export function widenedNote(caps: Capabilities): string {
  return caps.childPermissions?.length
    ? `; children widened by the target's childPermissions: ${caps.childPermissions.join(" ")}`
    : "";
}
