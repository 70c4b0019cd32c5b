// The recorded-call sweep can fail and can pass, in both modes: a rotation split into two
// transactions (no crash points) is caught and shrunk to one rotation; a store with cell
// 1's methods only is judged, not passed on nothing; a store whose first write after
// recovery takes a stale id is caught by the second life (and only there), in both modes;
// a JSON-lines store that cannot open a torn last line is caught under power loss by the
// enumerated torn states (every run), while the correct one passes with torn states
// judged; the reference, the alt store and the correct JSON-lines store pass their second
// lives. Skipped (said out loud) without the recorder.
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { platformSkipReason } from "../../../recorder/build.ts";
import { type CallSweepOptions, type CallSweepReport, sweepCalls } from "./calls.ts";
import { LONG_APPENDS } from "./plan.ts";
import { callOutcomes } from "../core/outcomes.ts";
import { removedAtUnload } from "../../../internal/_test_folder.ts";

const skip = platformSkipReason();
const quiet = () => {};
const target = (path: string) => new URL(`../../../cells/${path}`, import.meta.url).href;
const REFERENCE = target("reference_target.ts");
const ALT = target("testdata/alt_store/target.ts");
const JSONL = target("testdata/jsonl_store/target.ts");
const TORN_INTOLERANT = target("testdata/mutants/jsonl_torn_tail_intolerant.ts");
const STALE_ID = target("testdata/mutants/resume_stale_next_id.ts");

async function run(options: Omit<CallSweepOptions, "log" | "seed"> & { seed?: number }) {
  const report = await sweepCalls({ seed: 3, log: quiet, ...options });
  if ("skip" in report) throw new Error(`the recorder did not run: ${report.skip}`);
  if (report.dir) removedAtUnload(report.dir);
  return report;
}

function test(name: string, fn: () => Promise<void>) {
  Deno.test({
    name: `sweep --syscalls: ${name}${skip ? ` SKIP: ${skip}` : ""}`,
    ignore: skip !== undefined,
    sanitizeResources: false,
    sanitizeOps: false,
    fn,
  });
}

const failures = (report: CallSweepReport) =>
  report.failures.map((f) => `${f.kind} ${f.program} #${f.call}: ${f.problems[0]}`);

test("a two-transaction rotation is caught and shrunk", async () => {
  const report = await run({
    target: target("testdata/mutants/rotation_two_transactions_unmarked.ts"),
    programs: ["append+rotate"],
    kills: 0,
    resumes: 0,
  });
  assert(!report.ok, "the sweep passed a rotation split into two transactions");
  const [shrunk] = report.failures;
  assertEquals(shrunk!.program, "rotate");
  assert(
    /rotation atomicity: the interrupted rotate/.test(shrunk!.problems[0]!),
    shrunk!.problems[0],
  );
  assert(shrunk!.replay.includes(`--program rotate --call ${shrunk!.call}`), shrunk!.replay);
});

test("the reference store's append passes every recorded call and its second lives", async () => {
  const report = await run({ target: REFERENCE, programs: ["append"], kills: 1 });
  assert(report.ok, JSON.stringify(report.failures.slice(0, 2)));
  assert(report.states > 10, `only ${report.states} states`);
  assertEquals(report.children, { run: 1, failed: 0 });
  assert(report.resumes.run >= 1 && report.resumes.failed === 0, JSON.stringify(report.resumes));
});

test("a store with cell 1's methods only is judged: its append programs run", async () => {
  const report = await run({ target: target("testdata/core_only_target.ts"), maxLength: 1 });
  assertEquals(report.programs, 1, "append is the one program it supports");
  assert(report.ok && report.states > 10, failures(report).join("\n"));
  assertEquals(Object.keys(report.clauses), ["prefix durability"]);
});

for (const mode of ["crash", "power-loss"] as const) {
  test(`${mode}: an id recovery left stale is caught by the second life only`, async () => {
    const report = await run({ target: STALE_ID, programs: ["append"], mode, kills: 0 });
    const lines = failures(report);
    assert(!report.ok, "the sweep passed a store that overwrites a message after recovery");
    assert(report.failures.every((f) => f.kind === "resume"), lines.join("\n"));
    assert(
      /resume after recovery \(append\+append\): the store after the second life is not the acknowledged work of both lives: messages of main: \d+ rows instead of \d+/
        .test(report.failures[0]!.problems[0]!),
      lines.join("\n"),
    );
    assert(report.failures[0]!.evidence !== undefined, "the resumed state is kept");
  });
}

test("power-loss: a JSON-lines store that cannot open a torn last line is caught by a torn state", async () => {
  const crash = await run({ target: TORN_INTOLERANT, programs: ["append"], kills: 0 });
  assert(crash.ok, `a SIGKILL never tears a write: ${failures(crash).join("\n")}`);
  for (const seed of [3, 4]) {
    const report = await run({
      target: TORN_INTOLERANT,
      programs: ["append"],
      mode: "power-loss",
      seed,
    });
    const torn = report.failures.filter((f) => f.kind === "state" && / torn /.test(f.state));
    assert(torn.length > 0, `no torn state failed (seed ${seed}): ${failures(report).join("\n")}`);
    assert(
      torn.every((f) =>
        /cannot check the recovered store: Error: Cannot open store .*(no newline|corrupt)/.test(
          f.problems[0]!,
        )
      ),
      torn.map((f) => f.problems[0]).join("\n"),
    );
  }
});

const GREEN: [string, string][] = [
  ["the correct JSON-lines store", JSONL],
  ["the reference store", REFERENCE],
];
for (const [name, store] of GREEN) {
  test(`power-loss: ${name} passes its torn last writes and second lives`, async () => {
    const report = await run({
      target: store,
      programs: ["append", "append+append"],
      mode: "power-loss",
    });
    assert(report.ok, failures(report).join("\n"));
    assert(report.torn.states > 0 && report.torn.tearable > 0, JSON.stringify(report.torn));
    assert(
      report.clauses["prefix durability"]!.torn === report.torn.states,
      "torn counted per clause",
    );
    assert(report.resumes.run > 0 && report.resumes.failed === 0, JSON.stringify(report.resumes));
  });
}

test("the alt store's recovered states take their clause's next operation", async () => {
  const report = await run({
    target: ALT,
    programs: ["append", "rotate", "rewind", "fork", "claim", "record+attempt"],
    kills: 0,
  });
  assert(report.ok, failures(report).join("\n"));
  assert(report.resumes.run >= 6 && report.resumes.failed === 0, JSON.stringify(report.resumes));
});

// Cells 8 to 13: the reference passes one program of each clause (and its resumes);
// a planted mutant of each clause is caught under that clause.
const CLAUSE_PROGRAMS = [
  "rotate+rotate",
  "batch",
  "ensure+end+reopen",
  "refresh+refresh",
  "request+claim",
  "append+ghost",
];
const NEW_CLAUSES = [
  "resume resolution",
  "batch atomicity",
  "ends and reopens",
  "lease renewal",
  "pending handoffs",
  "checkpoint validity",
];

test("the reference store passes the programs of cells 8 to 13 and their second lives", async () => {
  const report = await run({ target: REFERENCE, programs: CLAUSE_PROGRAMS, kills: 1 });
  assert(report.ok, failures(report).join("\n"));
  for (const clause of NEW_CLAUSES) {
    assert(report.clauses[clause]!.states > 0, `${clause}: no state judged`);
  }
  assert(report.resumes.run >= 5 && report.resumes.failed === 0, JSON.stringify(report.resumes));
});

const CAUGHT: [string, string, RegExp][] = [
  [
    "resolve_returns_parent",
    "rotate",
    /^resume resolution: resolveResumeSessionId\(main\) = main, expected the live tip rot-0$/,
  ],
  [
    "reopen_orphan_with_child",
    "rotate",
    /^resume resolution: reopenOrphanedCompressionSession\(main\) returned true for a parent with a published continuation$/,
  ],
  [
    "message_count_stale",
    "batch",
    /^batch atomicity: messageCount\(main\) = \d+, \d+ active rows$/,
  ],
  [
    "append_to_ended_accepted",
    "ensure+end+reopen",
    /^ends and reopens: an append to the ended session ens returned \d+, not SessionEndedError/,
  ],
  [
    "end_ack_before_commit",
    "ensure+end+end",
    /^durability: acknowledged operation 1 \(end\) lost: the recovered state is the one before operation 1$/,
  ],
  [
    "refresh_ignores_holder",
    "refresh+refresh",
    /^lease renewal: a holder that never took main's lock renewed it: refreshCompressionLock returned true$/,
  ],
  [
    "pending_list_includes_running",
    "request+claim",
    /^pending handoffs: listPendingHandoffs: listed, not pending: h0$/,
  ],
  [
    "append_creates_missing_session",
    "ghost",
    /^checkpoint validity: an append to the missing session ghost \(operation 0\) was not refused with a typed error/,
  ],
];
for (const [mutant, program, reason] of CAUGHT) {
  test(`${mutant} is caught by its clause`, async () => {
    const report = await run({
      target: target(`testdata/mutants/${mutant}.ts`),
      programs: [program],
      kills: 0,
      resumes: 0,
      shrink: false,
    });
    assert(!report.ok, `the sweep passed ${mutant}`);
    const problems = report.failures.flatMap((f) => f.problems);
    assert(problems.some((p) => reason.test(p)), problems.slice(0, 3).join("\n"));
  });
}

// A correct store that copies a file in the kernel makes a run the recorder cannot follow:
// the suite says so (ERROR, the run kept), never a FAIL of the store.
test("a run the recorder cannot follow is an ERROR, never a FAIL", async () => {
  const report = await run({
    target: target("testdata/notice_copy_target.ts"),
    programs: ["append"],
    kills: 0,
    resumes: 0,
  });
  const [unjudged, ...rest] = report.failures;
  assert(unjudged?.harness === true && rest.length === 0, JSON.stringify(report.failures));
  assert(
    /copy_file_range \(a copy made in the kernel/.test(unjudged.problems[0]!),
    unjudged.problems[0],
  );
  const [outcome] = callOutcomes(report, {
    tier: "syscalls-crash",
    library: "fixed",
    leg: "default",
    cells: [1],
  });
  assertEquals([outcome!.status, outcome!.judged], ["ERROR", 0]);
  assert(
    outcome!.evidence !== undefined && Deno.statSync(outcome!.evidence).isDirectory,
    outcome!.evidence,
  );
});

// Synchronous writes: a store whose log is opened O_DSYNC (no sync calls) passes under
// power loss with torn states judged; writes split between a plain handle and the O_DSYNC
// one are more than the model follows: an ERROR with the run kept, never a FAIL.
test("writes through an O_DSYNC handle are durable when they return", async () => {
  const green = await run({
    target: target("testdata/jsonl_store/dsync_target.ts"),
    mode: "power-loss",
    programs: ["append+append"],
    kills: 0,
    resumes: 0,
  });
  assert(green.ok, JSON.stringify(green.failures[0]));
  assert(
    green.states > 0 && green.torn.states > 0,
    `${green.states} states, ${JSON.stringify(green.torn)}`,
  );
  const split = await run({
    target: target("testdata/jsonl_store/mixed_sync_target.ts"),
    mode: "power-loss",
    programs: ["append"],
    kills: 0,
    resumes: 0,
  });
  const [unjudged, ...rest] = split.failures;
  assert(unjudged?.harness === true && rest.length === 0, JSON.stringify(split.failures));
  assert(/is a synchronous write/.test(unjudged.problems[0]!), unjudged.problems[0]);
  assert(unjudged.evidence !== undefined, "the run was not kept");
});

// A store that saves a whole snapshot by rename (the temporary file synced first, the
// folder after): its durability rests on names, and it passes with torn states judged.
test("a store that replaces its file by rename is durable under power loss", async () => {
  const report = await run({
    target: target("testdata/snapshot_store/target.ts"),
    mode: "power-loss",
    programs: ["append+append"],
    kills: 0,
    resumes: 0,
  });
  assert(report.ok, JSON.stringify(report.failures[0]));
  assert(
    report.states > 0 && report.torn.states > 0,
    `${report.states} states, ${JSON.stringify(report.torn)}`,
  );
});

// A store that makes its path a folder: its states are copied whole, and it passes both
// modes with its names judged.
// So does one that keeps its log in the path's folder under a name of its own.
test("a store whose path is a folder, or whose log is named its own way, is judged in both modes", async () => {
  for (const layout of ["folder_store/target.ts", "jsonl_store/sibling_target.ts"]) {
    for (const mode of ["crash", "power-loss"] as const) {
      const report = await run({
        target: target(`testdata/${layout}`),
        mode,
        programs: ["append+append"],
        kills: 0,
        resumes: 1,
      });
      assert(report.ok, `${layout}, ${mode}: ${JSON.stringify(report.failures[0])}`);
      assert(report.states > 0, `${layout}, ${mode}: no state judged`);
    }
  }
});

// A store's periodic work lands in a later write than a short program reaches: the long run
// of appends catches a compaction that replays what its snapshot covers, under SIGKILL, and
// passes the correct one.
test("twelve appends reach a compaction: the doubling one fails, the correct one passes", async () => {
  const long = { mode: "crash" as const, programs: [LONG_APPENDS.join("+")], kills: 0, resumes: 0 };
  const correct = await run({ target: target("testdata/compacting_store/target.ts"), ...long });
  assert(correct.ok, JSON.stringify(correct.failures[0]));
  const doubling = await run({
    target: target("testdata/mutants/compaction_replays_covered_log.ts"),
    ...long,
  });
  assert(!doubling.ok, "the doubling compaction passed");
  assert(
    /neither absent nor complete|contiguous|rows instead of/.test(
      doubling.failures[0]!.problems[0]!,
    ),
    doubling.failures[0]!.problems[0],
  );
});

// A store whose writes go around libc (raw system calls, as a Go program makes) leaves a
// log that does not replay to its files: an ERROR with the run kept, never a FAIL.
test("a store whose calls the recorder cannot see is an ERROR, never a FAIL", async () => {
  for (const mode of ["crash", "power-loss"] as const) {
    const report = await run({
      target: target("testdata/jsonl_store/raw_syscall_target.ts"),
      mode,
      programs: ["append"],
      kills: 0,
      resumes: 0,
    });
    const [unjudged, ...rest] = report.failures;
    assert(unjudged?.harness === true && rest.length === 0, JSON.stringify(report.failures));
    assert(/the recorder missed calls/.test(unjudged.problems[0]!), unjudged.problems[0]);
  }
});

// A store that prints to stdout, also after the seeding child's report, is seeded and
// judged as the reference is.
test("a store that prints to stdout is seeded and judged", async () => {
  const report = await run({
    target: target("testdata/chatty_target.ts"),
    programs: ["append"],
    kills: 0,
    resumes: 0,
  });
  assert(report.ok && report.states > 0, JSON.stringify(report.failures[0]));
});

// A store that moves the working directory into its folder, judged in this process (whose
// scratch folders come and go): the children the sweep starts after it still start.
test("a store that changes the working directory is judged, its second lives started", async () => {
  const before = Deno.cwd();
  try {
    const report = await run({
      target: target("testdata/chdir_target.ts"),
      programs: ["append"],
      kills: 1,
      resumes: 1,
    });
    assert(
      report.ok && report.resumes.run > 0,
      JSON.stringify(report.failures[0] ?? report.resumes),
    );
  } finally {
    Deno.chdir(before);
  }
});
