// The conformance report's logic on synthetic results: levels, the manifest, the verdict,
// the three report forms and the merge. No child runs here except one usage-error check.
import {
  deepStrictEqual as assertEquals,
  match as assertMatch,
  ok as assert,
  throws,
} from "node:assert/strict";
import { levelOf } from "./levels.ts";
import { NO_CRASH_POINTS } from "./_tool_tiers.ts";
import { applyManifest, ManifestError, parseManifest } from "./manifest.ts";
import { MergeError, mergeReports, parseReport } from "./merge.ts";
import { junitReport, markdownReport } from "./report_formats.ts";
import {
  type ConformanceReport,
  countStatuses,
  REPORT_SCHEMA,
  REPORT_SCHEMA_VERSION,
  type Result,
  type Status,
  type TierName,
  type TierRun,
  TIERS,
  verdictOf,
} from "./report_schema.ts";

function assertStringIncludes(text: string, part: string): void {
  assert(text.includes(part), `expected to find ${JSON.stringify(part)} in:\n${text}`);
}

function assertThrows(fn: () => unknown, kind: new (...args: never[]) => Error, part?: string) {
  throws(fn, (error: unknown) => error instanceof kind && (!part || error.message.includes(part)));
}

function result(
  cell: number,
  observed: Status,
  extra: Partial<Result> = {},
): Result {
  return {
    clause: `${cell} clause`,
    cell,
    tier: "cells",
    leg: "default",
    library: "system",
    observed,
    status: observed,
    ...extra,
  };
}

const ran = (tiers: readonly TierName[] = TIERS): TierRun[] =>
  tiers.map((tier) => ({ tier, status: "RAN", seconds: 1 }));

/** Every cell passing on default and delete, both power-loss tiers passing, a sweep. */
function fullResults(): Result[] {
  const out: Result[] = [];
  for (const leg of ["default", "delete"]) {
    for (let cell = 1; cell <= 13; cell++) out.push(result(cell, "PASS", { leg }));
  }
  out.push(result(1, "PASS", { tier: "syscalls-crash" }));
  out.push(result(1, "PASS", { tier: "syscalls-power-loss" }));
  out.push(result(1, "PASS", { tier: "powerloss-cells" }));
  const { cell: _, ...sweep } = result(0, "PASS", { tier: "sweep", clause: "crash points" });
  out.push(sweep);
  return out;
}

/** A fault clause's row on a leg of the system library. */
const faultRow = (clause: string, leg: string, observed: Status = "PASS"): Result => {
  const { cell: _, ...row } = result(0, observed, { tier: "faults", clause, leg });
  return row;
};
const FAULT_NAMES = ["F1 injected errors", "F2 corruption fails closed"];
const faultRows = (observed: Status = "PASS") =>
  ["default", "delete"].flatMap((leg) => FAULT_NAMES.map((c) => faultRow(c, leg, observed)));

Deno.test("levels: FULL keeps its meaning; HARDENED adds every fault clause on every honoured leg", () => {
  // FULL without the fault tier: the next level names what is missing.
  const full = levelOf(fullResults(), ran());
  assertEquals(full.level, "FULL");
  assertEquals(full.next?.level, "HARDENED");
  // A failing fault clause never takes FULL away.
  assertEquals(levelOf([...fullResults(), ...faultRows("FAIL")], ran()).level, "FULL");
  assertEquals(levelOf([...fullResults(), ...faultRows()], ran()), { level: "HARDENED" });
  // --quick runs the fault tier once per on-disk mode: a leg left out is no gap...
  const deleteOnly = faultRows().filter((r) => r.leg === "delete");
  assertEquals(levelOf([...fullResults(), ...deleteOnly], ran()).level, "HARDENED");
  // ...but a leg it ran on needs every clause, and a library needs some leg.
  const half = faultRows().filter((r) => !(r.leg === "delete" && r.clause.startsWith("F2")));
  assertEquals(levelOf([...fullResults(), ...half], ran()).next?.missing, [
    "F2 corruption fails closed on faults delete × system: not run",
  ]);
  assertEquals(levelOf(fullResults(), ran()).next?.missing, [
    "the fault clauses on system: not run",
  ]);
  // A SKIP is no evidence: one clause skipped on one leg keeps the store at FULL.
  const skipped = faultRows().map((r, i) =>
    i === 3 ? { ...r, observed: "SKIP" as const, status: "SKIP" as const, reason: "no cc" } : r
  );
  const verdict = levelOf([...fullResults(), ...skipped], ran());
  assertEquals(verdict.level, "FULL");
  assertEquals(verdict.next?.missing, [
    "F2 corruption fails closed on faults delete × system: SKIP (no cc)",
  ]);
  // A fault tier that did not run is missing too.
  const noFaults = ran().map((t) =>
    t.tier === "faults" ? { ...t, status: "SKIP" as const, reason: "not requested" } : t
  );
  assertEquals(levelOf([...fullResults(), ...faultRows()], noFaults).next?.missing, [
    "tier faults: SKIP (not requested)",
  ]);
});

Deno.test("levels: every cell and tier passing is FULL", () => {
  assertEquals(levelOf(fullResults(), ran()).level, "FULL");
  // Cell 2 holds on the default leg only (by design): its SKIP elsewhere is no gap...
  const defaultOnly = (reason: string, atDefault: Status = "PASS", typed = true) =>
    fullResults().map((r) =>
      r.cell !== 2 || r.tier !== "cells" ? r : r.leg === "delete"
        ? result(2, "SKIP", {
          leg: "delete",
          reason,
          ...(typed ? { skipKind: "default-leg-only" as const } : {}),
        })
        : result(2, atDefault)
    );
  assertEquals(
    levelOf(defaultOnly("default leg only: one predicated UPDATE"), ran()).level,
    "FULL",
  );
  // ...but it must pass there, and any other SKIP on an honoured leg is one.
  assertEquals(levelOf(defaultOnly("default leg only: x", "SKIP"), ran()).level, "DURABLE");
  const other = levelOf(defaultOnly("the store lacks claimHandoff", "PASS", false), ran());
  assertEquals(other.next?.missing, [
    "cell 2 on cells delete × system: SKIP (the store lacks claimHandoff)",
  ]);
  // The kind decides, never the reason's words: the same text without it is a gap.
  const untyped = defaultOnly("default leg only: one predicated UPDATE", "PASS", false);
  assertEquals(levelOf(untyped, ran()).level, "DURABLE");
});

Deno.test("levels: a default-leg cell --quick left to its twin must pass on the twin", () => {
  // Cell 1 saw the default leg and the delete leg both run in DELETE.
  const observed = (r: Result) =>
    r.tier === "cells" && r.cell === 1 ? { ...r, figures: { legObservations: { delete: 5 } } } : r;
  const twinned = (onTwin: Status, mode = "delete") =>
    fullResults().map(observed).map((r) => {
      if (r.tier !== "cells" || r.cell === 1) {
        return r.leg === "default" && r.cell === 1
          ? { ...r, figures: { legObservations: { [mode]: 5 } } }
          : r;
      }
      if (r.leg === "default") {
        return result(r.cell!, "SKIP", { reason: "--quick: left", skipKind: "judged-on-twin" });
      }
      return r.cell === 4 ? result(4, onTwin, { leg: "delete" }) : r;
    });
  assertEquals(levelOf(twinned("PASS"), ran()).level, "FULL");
  // A FAIL or a SKIP on the twin is the gap, named once, on the twin: never the default
  // leg's SKIP, which would read as judged. A default leg in another mode has no twin.
  const failed = levelOf(twinned("FAIL"), ran());
  assertEquals(failed.level, "DURABLE");
  assertEquals(failed.next?.missing, ["cell 4 on cells delete × system: FAIL"]);
  assertEquals(levelOf(twinned("SKIP"), ran()).next?.missing, [
    "cell 4 on cells delete × system: SKIP",
  ]);
  const apart = levelOf(twinned("PASS", "wal"), ran());
  assertEquals(apart.level, "DURABLE");
  assertEquals(apart.next?.missing.length, 12);
});

Deno.test("levels: a leg --quick left to the same leg on an earlier library must pass there", () => {
  // DELETE on both libraries: the fixed library's delete leg ran cell 1 only.
  const observed = (r: Result): Result =>
    r.tier === "cells" && r.cell === 1 ? { ...r, figures: { legObservations: { delete: 5 } } } : r;
  const base = fullResults().filter((r) => r.leg === "delete" || r.tier !== "cells").map(observed);
  const onFixed = (onTwin: Status, mode = "delete") =>
    [
      ...base.map((r) =>
        r.tier === "cells" && r.cell === 4 ? { ...r, observed: onTwin, status: onTwin } : r
      ),
      observed(result(1, "PASS", { leg: "delete", library: "fixed" })),
      ...Array.from({ length: 12 }, (_, i) =>
        result(i + 2, "SKIP", { leg: "delete", library: "fixed", skipKind: "judged-on-twin" })),
    ].map((r) =>
      r.library === "fixed" && r.cell === 1
        ? { ...r, figures: { legObservations: { [mode]: 5 } } }
        : r
    );
  const faults = (library: string) =>
    FAULT_NAMES.map((c) => ({ ...faultRow(c, "delete"), library }));
  assertEquals(levelOf([...onFixed("PASS"), ...faults("system")], ran()), { level: "HARDENED" });
  // What the twin said instead is the gap, named once, on the twin.
  assertEquals(levelOf(onFixed("FAIL"), ran()).next?.missing, [
    "cell 4 on cells delete × system: FAIL",
  ]);
  // In another mode on the fixed library there is no twin: its SKIPs are gaps.
  assertEquals(levelOf(onFixed("PASS", "wal"), ran()).next?.missing.length, 12);
  // The fault tier ran where the mode was judged; a library with an untwinned leg needs it.
  const walOnFixed = Array.from({ length: 13 }, (_, i) =>
    result(i + 1, "PASS", {
      leg: "wal",
      library: "fixed",
      ...(i === 0 ? { figures: { legObservations: { wal: 5 } } } : {}),
    }));
  assertEquals(levelOf([...onFixed("PASS"), ...walOnFixed, ...faults("system")], ran()).next, {
    level: "HARDENED",
    missing: ["the fault clauses on fixed: not run"],
  });
});

Deno.test("levels: a process left running after a leg keeps the store below FULL", () => {
  const left = result(0, "FAIL", { clause: "no survivors", leg: "delete" });
  delete left.cell;
  const verdict = levelOf([...fullResults(), left], ran());
  assertEquals(verdict.level, "DURABLE");
  assertEquals(verdict.next?.missing, ["no survivors on cells delete × system: FAIL"]);
});

Deno.test("levels: a FAIL of cell 1 on one honoured leg lowers the level to NONE", () => {
  const results = fullResults().map((r) =>
    r.cell === 1 && r.leg === "delete" && r.tier === "cells"
      ? { ...r, observed: "FAIL" as const, status: "FAIL" as const }
      : r
  );
  const verdict = levelOf(results, ran());
  assertEquals(verdict.level, "NONE");
  assertEquals(verdict.next?.level, "BASE");
  assertStringIncludes(verdict.next!.missing.join("\n"), "cell 1 on cells delete × system: FAIL");
});

Deno.test("levels: an XFAIL counts as a failure, a SKIP never as a pass", () => {
  const xfail = fullResults().map((r) =>
    r.cell === 4 && r.leg === "default" && r.tier === "cells"
      ? { ...r, observed: "FAIL" as const, status: "XFAIL" as const }
      : r
  );
  assertEquals(levelOf(xfail, ran()).level, "DURABLE");
  const skipped = fullResults().map((r) =>
    r.cell === 5 ? { ...r, observed: "SKIP" as const, status: "SKIP" as const } : r
  );
  assertEquals(levelOf(skipped, ran()).level, "DURABLE");
  // Cell 1 SKIPPED on every leg (the store honours none): nothing is evidence.
  const none = fullResults().map((r) =>
    r.cell === 1 && r.tier === "cells"
      ? { ...r, observed: "SKIP" as const, status: "SKIP" as const, reason: "leg not honoured" }
      : r
  );
  const verdict = levelOf(none, ran());
  assertEquals(verdict.level, "NONE");
  assertMatch(verdict.next!.missing[0]!, /ran on no leg.*leg not honoured/);
});

Deno.test("levels: power loss failing or absent stops at BASE; a skipped tier stops at DURABLE", () => {
  const lost = fullResults().map((r) =>
    r.tier === "syscalls-power-loss"
      ? { ...r, observed: "FAIL" as const, status: "FAIL" as const }
      : r
  );
  assertEquals(levelOf(lost, ran()).level, "BASE");
  const noLoss = fullResults().filter((r) =>
    r.tier !== "syscalls-power-loss" && r.tier !== "powerloss-cells"
  );
  assertEquals(levelOf(noLoss, ran()).level, "BASE");
  const tiers = ran().map((t) =>
    t.tier === "sweep" ? { ...t, status: "SKIP" as const, reason: "no crash points" } : t
  );
  const verdict = levelOf(fullResults(), tiers);
  assertEquals(verdict.level, "DURABLE");
  assertEquals(verdict.next?.missing, ["tier sweep: SKIP (no crash points)"]);
});

Deno.test("levels: a store without crash points reaches FULL once its file-system calls were crashed", () => {
  const noPoints = ran().map((t) =>
    t.tier === "sweep"
      ? {
        ...t,
        status: "SKIP" as const,
        reason: NO_CRASH_POINTS,
        skipKind: "no-crash-points" as const,
      }
      : t
  );
  const results = fullResults().filter((r) => r.tier !== "sweep");
  assertEquals(levelOf(results, noPoints).level, "FULL");
  // The kind decides, never the reason's words: the same text without it is a gap.
  const untyped = noPoints.map(({ skipKind: _, ...t }) => t);
  assertEquals(levelOf(results, untyped).level, "DURABLE");
  // Without the file-system call crashes the named points are missed after all.
  const neither = noPoints.map((t) =>
    t.tier === "syscalls-crash" ? { ...t, status: "SKIP" as const, reason: "no cc" } : t
  );
  assertEquals(levelOf(results, neither).level, "DURABLE");
});

const MANIFEST = JSON.stringify({
  expectations: [
    { cell: 4, tier: "cells", expect: "FAIL", reason: "rewind not atomic", link: "https://x/1" },
    { cell: 6, expect: "INTERMITTENT", reason: "busy storms" },
  ],
});

Deno.test("manifest: an expected failure is XFAIL and keeps the run green", () => {
  const manifest = parseManifest("t.expectations.json", MANIFEST);
  const results = applyManifest([result(1, "PASS"), result(4, "FAIL")], manifest);
  assertEquals(results.map((r) => r.status), ["PASS", "XFAIL"]);
  assertEquals(results[1]!.expectation?.link, "https://x/1");
  assertEquals(verdictOf(results, true).verdict, "PASS");
  assertEquals(verdictOf(applyManifest([result(4, "FAIL")], undefined), false).verdict, "FAIL");
});

Deno.test("manifest: a fault entry matches that fault clause's rows only", () => {
  const manifest = parseManifest(
    "t.expectations.json",
    JSON.stringify({ expectations: [{ fault: "F2", expect: "FAIL", reason: "untyped" }] }),
  );
  const results = applyManifest([
    faultRow("F2 corruption fails closed", "default", "FAIL"),
    faultRow("F1 injected errors", "default", "FAIL"),
    result(2, "FAIL"),
  ], manifest);
  assertEquals(results.map((r) => r.status), ["XFAIL", "FAIL", "FAIL"]);
});

Deno.test("manifest: an unexpected pass is XPASS and fails only with --strict", () => {
  const manifest = parseManifest("t.expectations.json", MANIFEST);
  const results = applyManifest(
    [result(4, "PASS"), result(6, "PASS"), result(6, "SKIP")],
    manifest,
  );
  assertEquals(results.map((r) => r.status), ["XPASS", "PASS", "SKIP"]);
  assertEquals(verdictOf(results, false).verdict, "PASS");
  assertEquals(verdictOf(results, true).verdict, "FAIL");
  assertEquals(countStatuses(results), { PASS: 1, FAIL: 0, ERROR: 0, SKIP: 1, XFAIL: 0, XPASS: 1 });
});

Deno.test("manifest: an unknown cell, tier, leg or key, or bad JSON, is an error naming the file", () => {
  const bad = (entry: unknown) => JSON.stringify({ expectations: [entry] });
  const cases: [string, RegExp][] = [
    [
      bad({ cell: 14, expect: "FAIL", reason: "x" }),
      /my\.expectations\.json: entry 0 names an unknown cell 14: use 1, 2/,
    ],
    [bad({ tier: "fuzz", expect: "FAIL", reason: "x" }), /unknown tier "fuzz": use cells, sweep/],
    [bad({ leg: "truncate", expect: "FAIL", reason: "x" }), /unknown leg "truncate"/],
    [bad({ fault: "F9", expect: "FAIL", reason: "x" }), /unknown fault clause "F9": use F1, F2/],
    [bad({ cell: 1, expect: "PASS", reason: "x" }), /expects "PASS": use "FAIL" or "INTERMITTENT"/],
    [bad({ cell: 1, expect: "FAIL" }), /has no reason/],
    [bad({ cells: 1, expect: "FAIL", reason: "x" }), /unknown key "cells"/],
    ["{ not json", /my\.expectations\.json: not JSON .*fix the syntax/],
    ["[]", /expected an object \{"expectations"/],
  ];
  for (const [text, message] of cases) {
    assertThrows(() => parseManifest("my.expectations.json", text), ManifestError, undefined);
    try {
      parseManifest("my.expectations.json", text);
    } catch (error) {
      assertMatch((error as Error).message, message);
    }
  }
});

function report(machine: string, results: Result[], extra: Partial<ConformanceReport> = {}) {
  const tiers = ran();
  const level = levelOf(results, tiers);
  return {
    schema: REPORT_SCHEMA,
    version: REPORT_SCHEMA_VERSION,
    level: level.level,
    ...(level.next ? { next: level.next } : {}),
    verdict: verdictOf(results, false).verdict,
    target: "file:///x/targets/store.ts",
    date: "2026-01-01T00:00:00.000Z",
    command: "deno task conformance --target targets/store.ts",
    strict: false,
    quick: false,
    machines: [{ id: machine, os: "linux", arch: "x86_64", deno: "2.9.6" }],
    capabilities: {},
    tiers,
    results,
    counts: countStatuses(results),
    ...extra,
  } as ConformanceReport;
}

Deno.test("merge: rows keyed by machine, the level is the weakest machine's", () => {
  const a = report("linux-ext4", fullResults());
  const broken = fullResults().map((r) =>
    r.cell === 1 && r.tier === "cells" && r.leg === "default"
      ? { ...r, observed: "FAIL" as const, status: "FAIL" as const, reason: "lost m7" }
      : r
  );
  const b = report("macos-apfs", broken);
  assertEquals([a.level, b.level], ["FULL", "NONE"]);
  const merged = mergeReports(
    [parseReport("a.json", JSON.stringify(a)), parseReport("b.json", JSON.stringify(b))],
    "merge",
  );
  assertEquals(merged.machines.map((m) => m.id), ["linux-ext4", "macos-apfs"]);
  assertEquals(merged.results.length, a.results.length + b.results.length);
  assert(merged.results.every((r) => r.machine === "linux-ext4" || r.machine === "macos-apfs"));
  assertEquals(merged.level, "NONE");
  assertEquals(merged.verdict, "FAIL");
  assertStringIncludes(merged.next!.missing.join("\n"), "on macos-apfs");
  // The same machine twice stays two machines.
  const twice = mergeReports([a, a], "merge");
  assertEquals(twice.machines.map((m) => m.id), ["linux-ext4", "linux-ext4#2"]);
  assertEquals(twice.level, "FULL");
  const md = markdownReport(merged);
  assertStringIncludes(md, "| clause | tier | leg | library | machine | result |");
  assertStringIncludes(md, "| 1 clause | cells | default | system | macos-apfs | FAIL (lost m7) |");
});

Deno.test("merge: a run that left a process running fails the merged run too", () => {
  const clean = report("linux-ext4", fullResults());
  const left = {
    ...report("macos-apfs", fullResults()),
    survivors: [{ pid: 7, commandLine: "x" }],
  };
  const merged = mergeReports([clean, left], "merge");
  assertEquals(merged.verdict, "FAIL");
  assertEquals(merged.survivors, [{ pid: 7, commandLine: "x" }]);
  assertEquals(mergeReports([clean, clean], "merge").verdict, "PASS");
});

Deno.test("merge: not a report, another version or another target is a clear error", () => {
  assertThrows(
    () => parseReport("x.json", "{}"),
    MergeError,
    'not a conformance report (no "schema"',
  );
  const old = JSON.stringify({ ...report("m", []), version: 0 });
  assertThrows(() => parseReport("old.json", old), MergeError, "report version 0");
  const other = report("m", [], { target: "file:///y/other.ts" });
  assertThrows(
    () => mergeReports([report("m", []), other], "merge"),
    MergeError,
    "different targets",
  );
});

Deno.test("report: Markdown table, failures with replay and evidence; JUnit failures", () => {
  const manifest = parseManifest("t.json", MANIFEST);
  const results = applyManifest([
    result(1, "PASS"),
    result(1, "SKIP", { leg: "wal", reason: "leg wal not honoured: on-disk delete" }),
    result(2, "FAIL", {
      reason: "two winners",
      replay: "deno task matrix --cells 2",
      evidence: "/e/2",
      seed: 7,
    }),
    result(4, "FAIL"),
    result(4, "PASS", { leg: "delete" }),
  ], manifest);
  const r = report("m", results, { strict: true });
  const md = markdownReport(r);
  assertStringIncludes(
    md,
    "| 1 clause | cells | wal | system | SKIP (leg wal not honoured: on-disk delete) |",
  );
  assertStringIncludes(
    md,
    "| 4 clause | cells | default | system | XFAIL (rewind not atomic, https://x/1) |",
  );
  assertStringIncludes(md, "  - replay: `deno task matrix --cells 2`");
  assertStringIncludes(md, "  - evidence: `/e/2`");
  assertStringIncludes(md, "· seed 7");
  // A verdict under --quick says it is a smoke run.
  assertStringIncludes(
    markdownReport({ ...r, quick: true }),
    "(--quick: a smoke run, the full run gives the verdict); ",
  );
  assert(!md.includes("--quick: a smoke run"), md);
  const xml = junitReport(r);
  // Strict: the FAIL and the XPASS are failures; the SKIP is skipped; the XFAIL passes.
  assertStringIncludes(
    xml,
    '<testsuites name="conformance file:///x/targets/store.ts" tests="5" failures="2">',
  );
  assertStringIncludes(xml, '<skipped message="leg wal not honoured: on-disk delete"/>');
  assertStringIncludes(xml, "XPASS: expected to fail (rewind not atomic) but passed");
  const lenient = junitReport({ ...r, strict: false });
  assertStringIncludes(lenient, 'failures="1"');
});

Deno.test("verdict: nothing judged is SKIP with why, an ERROR is never PASS or FAIL", () => {
  const skips = [result(1, "SKIP", { reason: "leg not honoured" }), result(2, "SKIP")];
  const none = verdictOf(skips, false, ran());
  assertEquals(none.verdict, "SKIP");
  assertMatch(none.why!, /nothing was judged \(2 result\(s\), every one a SKIP: leg not honoured/);
  const allSkipped = ran().map((t) => ({ ...t, status: "SKIP" as const, reason: "no recorder" }));
  assertMatch(
    verdictOf([], false, allSkipped).why!,
    /every tier was skipped: cells, sweep, syscalls-crash, syscalls-power-loss, powerloss-cells, faults: no recorder$/,
  );
  const erred = verdictOf([result(1, "PASS"), result(2, "ERROR", { reason: "kill missed" })]);
  assertEquals(erred.verdict, "ERROR");
  assertEquals(verdictOf([result(1, "FAIL"), result(2, "ERROR")]).verdict, "FAIL");
  // An ERROR stays an ERROR under the manifest: no expectation turns it into XFAIL.
  const manifest = parseManifest("t.json", MANIFEST);
  assertEquals(applyManifest([result(4, "ERROR")], manifest)[0]!.status, "ERROR");
  // An ERROR of cell 1 on an honoured leg stops BASE.
  const broken = fullResults().map((r) =>
    r.cell === 1 && r.tier === "cells" && r.leg === "delete"
      ? { ...r, observed: "ERROR" as const, status: "ERROR" as const }
      : r
  );
  assertEquals(levelOf(broken, ran()).level, "NONE");
});
