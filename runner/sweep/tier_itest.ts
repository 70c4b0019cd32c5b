// The sweep tiers' typed results: nothing judged is a SKIP with why (never a PASS), a store
// without crash points gets the named-point tier SKIPPED and the recorded-call tiers run,
// a store on its own SQLite runs once labelled `own`, and a power-loss FAIL on DELETE +
// synchronous=FULL carries its checks, cause and fix, replay and evidence, from the
// recorded-call tier and from the power-loss cells alike.
import { deepStrictEqual, ok } from "node:assert/strict";
import { exists } from "../../internal/fs.ts";
import { platformSkipReason } from "../../recorder/build.ts";
import { fixedSqlitePath } from "../sqlite_build.ts";
import { sqliteLibraryPath } from "../../session_db/sqlite/database.ts";
import type { Outcome } from "../result.ts";
import { powerLossCellsTier, sweepTier, type TierOptions } from "./tier.ts";
import { testFolder } from "../../internal/_test_folder.ts";

const skip = platformSkipReason();
const target = (path: string) => new URL(`../../${path}`, import.meta.url).href;
const base = (path: string): TierOptions => ({
  target: target(path),
  legs: ["default"],
  libraries: [{ label: "system", path: sqliteLibraryPath() }],
  quick: true,
  evidenceDir: testFolder({ prefix: "tier-test-" }),
  seed: 5,
});
const show = (results: Outcome[]) =>
  results.map((r) => `${r.clause} ${r.status} ${r.judged}: ${r.reason ?? ""}`).join("\n");

function test(name: string, fn: () => Promise<void>) {
  Deno.test({
    name: `${name}${skip ? ` SKIP: ${skip}` : ""}`,
    ignore: skip !== undefined,
    sanitizeResources: false,
    sanitizeOps: false,
    fn,
  });
}

test("sweepTier: nothing judged is a SKIP with why, never a PASS", async () => {
  // Deno KV has no rotation: cell 3's clause judges no program.
  const outcome = await sweepTier({
    ...base("targets/deno_kv.ts"),
    tier: "syscalls-crash",
    cells: [3],
  });
  deepStrictEqual(outcome.run.status, "SKIP", show(outcome.results));
  ok(outcome.results.every((r) => r.status === "SKIP" && r.judged === 0), show(outcome.results));
  ok(/lacks/.test(outcome.run.reason ?? ""), outcome.run.reason);
  deepStrictEqual(outcome.results[0]!.library, "own", "Deno KV brings its own SQLite");
  // The library the judge loaded is not the store's: its version is never the row's.
  ok(
    outcome.results.every((r) => r.sqliteVersion === undefined),
    `a row names SQLite ${outcome.results.find((r) => r.sqliteVersion)?.sqliteVersion}`,
  );
});

test("sweepTier: no crash points SKIPs the named-point tier; the recorded calls judge the store", async () => {
  const points = await sweepTier({
    ...base("cells/testdata/jsonl_store/target.ts"),
    tier: "sweep",
  });
  deepStrictEqual(points.run.status, "SKIP");
  ok(/declares no crash points/.test(points.run.reason ?? ""), points.run.reason);
  const calls = await sweepTier({
    ...base("cells/testdata/jsonl_store/target.ts"),
    tier: "syscalls-power-loss",
  });
  deepStrictEqual(calls.run.status, "RAN");
  const cell1 = calls.results.find((r) => r.cell === 1)!;
  deepStrictEqual([cell1.status, cell1.library], ["PASS", "none"], show(calls.results));
  ok(
    (cell1.judged ?? 0) > 0 && Number(cell1.figures?.tornStates) > 0,
    JSON.stringify(cell1.figures),
  );
  // Its core methods reach cell 13 too (an append to a missing session refused, typed).
  const cell13 = calls.results.find((r) => r.cell === 13);
  deepStrictEqual(cell13?.status, "PASS", show(calls.results));
  ok(
    calls.results.filter((r) => r.cell !== 1 && r.cell !== 13).every((r) => r.status === "SKIP"),
    show(calls.results),
  );
});

test("sweepTier: a DELETE + FULL power-loss FAIL names its checks, cause, fix, replay and evidence", async () => {
  const outcome = await sweepTier({
    ...base("cells/testdata/mutants/delete_full.ts"),
    tier: "syscalls-power-loss",
    cells: [1],
    calls: { programs: ["append+append"], resumes: 0 },
  });
  const [cell1] = outcome.results;
  deepStrictEqual(cell1?.status, "FAIL", show(outcome.results));
  ok(
    cell1!.checks!.some((c) => /durability: acknowledged operation 0 \(append\) lost/.test(c)),
    cell1!.checks!.join("\n"),
  );
  deepStrictEqual(cell1!.diagnoses?.map((d) => d.pattern), ["delete-full-power-loss"]);
  ok(/synchronous ?= ?EXTRA/.test(cell1!.diagnoses![0]!.fix), cell1!.diagnoses![0]!.fix);
  ok(
    cell1!.replay?.includes("--syscalls --power-loss") && cell1!.replay.includes("--call"),
    cell1!.replay,
  );
  ok(cell1!.evidence !== undefined, "no evidence kept");
});

/** The power-loss tier's cell 1 on the target at `path` (8 instants), asserted `status`. */
async function cell1Outcome(path: string, status: Outcome["status"]): Promise<Outcome> {
  const tier = await powerLossCellsTier({ ...base(path), cells: [1], powerLoss: { instants: 8 } });
  const [cell1] = tier.results;
  deepStrictEqual(cell1?.status, status, show(tier.results));
  return cell1!;
}

test("powerLossCellsTier: the cells' FAIL carries the pattern; states, torn states and resumes are counted", async () => {
  const cell1 = await cell1Outcome("cells/testdata/mutants/delete_full.ts", "FAIL");
  deepStrictEqual(cell1!.diagnoses?.map((d) => d.pattern), ["delete-full-power-loss"]);
  ok(
    cell1!.checks!.some((c) => /diagnosis delete-full-power-loss: /.test(c)),
    cell1!.checks!.join("\n"),
  );
  ok(
    cell1!.replay?.startsWith("deno task powerloss-cells --target ") &&
      cell1!.replay.includes(" --libraries system --cells 1"),
    cell1!.replay,
  );
  const ref = await cell1Outcome("cells/reference_target.ts", "PASS");
  ok((ref!.judged ?? 0) > 0, "nothing judged");
  ok(
    Number(ref!.figures?.tornStates) > 0 && Number(ref!.figures?.resumes) > 0,
    JSON.stringify(ref!.figures),
  );
});

test("powerLossCellsTier: the judge opens each state in the leg's mode (cell 5 on delete × fixed)", async () => {
  // The fixed SQLite's default mode is WAL: a judge that opened a DELETE leg's state in its
  // own default converted it, and the racing recoverers could not switch it back (they
  // stayed locked 20 s and failed, a false FAIL of the reference).
  const fixed = fixedSqlitePath();
  if (!exists(fixed)) {
    console.log(`  SKIP: the fixed SQLite is not built (${fixed}): deno task sqlite`);
    return;
  }
  const outcome = await powerLossCellsTier({
    ...base("cells/reference_target.ts"),
    legs: ["delete"],
    libraries: [{ label: "fixed", path: fixed }],
    cells: [5],
  });
  const [cell5] = outcome.results;
  deepStrictEqual(cell5?.status, "PASS", show(outcome.results));
  ok((cell5?.judged ?? 0) > 0, show(outcome.results));
});

// A store that keeps a timer running after its work: the sweep's children and the tier's
// share (which judges its states in-process) still end, and the store is judged.
test("sweepTier: a store that never clears its timer is judged, and nothing waits on it", async () => {
  const outcome = await sweepTier({
    ...base("cells/testdata/lingering_timer_target.ts"),
    tier: "syscalls-crash",
    cells: [1],
    calls: { programs: ["append"], kills: 1 },
  });
  const [cell1] = outcome.results;
  deepStrictEqual(cell1?.status, "PASS", show(outcome.results));
});

// A store that never opens what a crash left (a pid file it never breaks): the tiers judge
// each state in a share's own process, which such a store stops for good. The state's
// judging has a deadline of its own: the store FAILs naming the state, in seconds.
test("powerLossCellsTier and sweepTier: a store that never returns from a crash state FAILs naming it", async () => {
  const stalling = {
    ...base("cells/testdata/stale_pidfile_target.ts"),
    legs: ["default", "wal"] as const,
    cells: [1],
    judgingDeadlineMs: 2000,
  };
  const never =
    /^The store never returned on the crash state "(.+)" \(judged in the tier's own process\): still running after 2 s/;
  const cells = await powerLossCellsTier({ ...stalling, legs: [...stalling.legs] });
  const [cell1, wal] = cells.results;
  deepStrictEqual([cell1?.clause, cell1?.leg, cell1?.status], [
    "1 power-loss cell",
    "default",
    "FAIL",
  ]);
  deepStrictEqual(
    never.exec(cell1!.reason ?? "")?.[1],
    "SIGKILL (the page cache kept)",
    show(cells.results),
  );
  deepStrictEqual([wal?.leg, wal?.status], ["wal", "ERROR"], show(cells.results));
  const calls = await sweepTier({
    ...stalling,
    legs: ["default"],
    tier: "syscalls-power-loss",
    calls: { programs: ["append"] },
  });
  const [call] = calls.results;
  deepStrictEqual(call?.status, "FAIL", show(calls.results));
  ok(/^append: before #\d+/.test(never.exec(call!.reason ?? "")?.[1] ?? ""), show(calls.results));
});
