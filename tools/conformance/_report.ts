// The report's three forms: JSON (the schema in _schema.ts), Markdown (a table a
// maintainer pastes into an issue) and JUnit XML (for CI dashboards).
import type { Capabilities, ConformanceReport, Result } from "./_schema.ts";
import { STATUSES } from "./_schema.ts";

const cellText = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

function shorten(text: string, limit = 160): string {
  const line = text.split("\n").map((l) => l.trim()).filter(Boolean).join(" | ");
  return line.length > limit ? `${line.slice(0, limit - 1)}…` : line;
}

/** How a result shows in the table: `SKIP (reason)`, `XFAIL (reason, link)`, … */
export function statusText(r: Result): string {
  if (r.status === "SKIP" || r.status === "FAIL") {
    return r.reason ? `${r.status} (${shorten(r.reason, 120)})` : r.status;
  }
  if (r.expectation && (r.status === "XFAIL" || r.status === "XPASS")) {
    const link = r.expectation.link ? `, ${r.expectation.link}` : "";
    return `${r.status} (${shorten(r.expectation.reason, 100)}${link})`;
  }
  return r.status;
}

/** The Markdown report: verdict, level, capabilities, the clause × tier × leg table, failures. */
export function markdownReport(report: ConformanceReport): string {
  const merged = report.machines.length > 1;
  const lines: string[] = [
    `## Conformance: ${report.target}`,
    "",
    `**${report.verdict}**, level **${report.level}**${
      report.next ? ` (next: ${report.next.level})` : ""
    }; ${STATUSES.map((s) => `${report.counts[s]} ${s}`).join(", ")}.`,
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
        caps.binding ? "on this project's binding" : "own SQLite or storage"
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
    r.status === "FAIL" || r.status === "XFAIL" || r.status === "XPASS"
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
 * (under strict) are failures, SKIP is skipped, XFAIL passes with its expectation.
 */
export function junitReport(report: ConformanceReport): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  const failing = (r: Result) => r.status === "FAIL" || (report.strict && r.status === "XPASS");
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
          r.evidence && `evidence: ${r.evidence}`,
          r.replay &&
          `replay: ${r.replay}`,
        ].filter(Boolean).join("\n");
        out.push(`      <failure message="${xml(message)}">${xml(body)}</failure>`);
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

/** Writes the three forms; each path's folder is created. */
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
 * The report's and the console's note of the permissions the target's children got
 * beyond the narrow scope: a user must see that the target asked for more.
 */
export function widenedNote(caps: Capabilities): string {
  return caps.childPermissions?.length
    ? `; children widened by the target's childPermissions: ${caps.childPermissions.join(" ")}`
    : "";
}
