// Any kind of store is judgeable: a JSON-lines log (not SQLite) registers without
// throwing, runs every cell it has the methods for on the default leg, and gets the
// journal-mode legs SKIPPED as not applicable; a broken one still fails cell 1. A JSON
// snapshot replaced by rename, a store whose path is a folder, one whose error classes keep
// Error's name, one handed out as a Proxy, one that compacts its log into a snapshot, one
// whose appends contend, and correct stores that spell their answers as their drivers do
// (SPELLINGS) are judged as well.
import { ok, strictEqual } from "node:assert/strict";
import { currentLeg, type LegName } from "../harness/legs.ts";
import { type CellId, CELLS } from "./register.ts";
import { runDefinitions } from "./engine/run_definitions.ts";
import { runOn } from "./faults/_itest_support.ts";
import { shortLivedClause } from "./faults/short_lived.ts";

const options = { sanitizeResources: false, sanitizeOps: false };
const jsonl = (name: string) => new URL(`./testdata/jsonl_store/${name}.ts`, import.meta.url);
const legNamed = (name: LegName) => ({ ...currentLeg(), name });
const testdata = (path: string) => new URL(`./testdata/${path}.ts`, import.meta.url);

/** One cell on the default leg against `target` (`span` when given), its outcome. */
async function judged(cell: CellId, target: URL, span?: number) {
  const [outcome] = await runDefinitions(
    await CELLS[cell]({
      target,
      leg: legNamed("default"),
      keepEvidence: false,
      ...(span ? { span } : {}),
    }),
  );
  return outcome;
}

Deno.test({
  name: "a store that is not SQLite passes cells 1, 6 and 13 and SKIPs cells 2 to 5 by capability",
  ...options,
  async fn() {
    const leg = legNamed("default");
    const cell1 = await judged(1, jsonl("target"));
    strictEqual(cell1?.status, "PASS", cell1?.detail);
    // Several processes on one log: it locks each append, so cell 6 holds too. A longer
    // span than the default: this store is quick, and its kills must land mid-work.
    const cell6 = await judged(6, jsonl("target"), 4);
    strictEqual(cell6?.status, "PASS", cell6?.detail);
    // Its core methods are all cell 13 needs: an append to a missing session refused, typed.
    const cell13 = await judged(13, jsonl("target"));
    strictEqual(cell13?.status, "PASS", cell13?.detail);
    for (const cell of [2, 3, 4, 5] as const) {
      const definitions = await CELLS[cell]({ target: jsonl("target"), leg, keepEvidence: false });
      strictEqual(definitions[0]?.ignore, true, `cell ${cell} ran: ${definitions[0]?.name}`);
      ok(/SKIP: the store lacks /.test(definitions[0]!.name), definitions[0]!.name);
    }
  },
});

Deno.test({
  name: "the journal-mode legs are not applicable to a store that is not SQLite",
  ...options,
  async fn() {
    for (const name of ["delete", "wal"] as const) {
      const definitions = await CELLS[1]({
        target: jsonl("target"),
        leg: legNamed(name),
        keepEvidence: false,
      });
      strictEqual(definitions[0]?.ignore, true, `leg ${name} ran: ${definitions[0]?.name}`);
      ok(
        definitions[0]!.name.includes(
          `leg ${name} not applicable: journal-mode legs are an SQLite notion`,
        ),
        definitions[0]!.name,
      );
    }
  },
});

Deno.test({
  name: "a store that is not SQLite and cannot reopen after a crash fails cell 1",
  ...options,
  async fn() {
    const outcome = await judged(1, jsonl("stale_lock"));
    strictEqual(outcome?.status, "FAIL", outcome?.detail);
    ok(outcome.detail?.includes("it is locked"), outcome.detail);
  },
});

// A store that replaces one snapshot file by rename on every change: correct, it passes
// the cells its methods allow; locking the file each save replaces lets two writers in at
// once, and cell 6 finds the message one of them lost.
Deno.test({
  name:
    "a store that saves by rename passes cells 1, 6 and 13; one that locks the file it replaces fails cell 6",
  ...options,
  async fn() {
    for (const cell of [1, 6, 13] as const) {
      const outcome = await judged(cell, testdata("snapshot_store/target"), 4);
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
    const broken = await judged(6, testdata("mutants/snapshot_lock_replaced_file"), 4);
    strictEqual(broken?.status, "FAIL", broken?.detail);
    ok(
      /acknowledged append\(s\) lost|acknowledged id \d+ after \d+/.test(broken.detail ?? ""),
      broken.detail,
    );
  },
});

// A store that makes its path a folder of segment files (a LevelDB-like layout): the leg
// audit reads a folder as no SQLite file, and the cells judge it like any other.
Deno.test({
  name: "a store whose path is a folder passes cells 1, 6 and 13",
  ...options,
  async fn() {
    for (const cell of [1, 6, 13] as const) {
      const outcome = await judged(cell, testdata("folder_store/target"), 4);
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

// A store that refuses a folder holding files not its own: the suite keeps its journals,
// barriers and copies beside each store's folder. Before, cells 4 and 6 FAILed it (an
// editor's journals, the open window's barriers in the store's folder).
Deno.test({
  name: "a store that refuses files not its own in its folder passes cells 4 and 6",
  ...options,
  async fn() {
    for (const cell of [4, 6] as const) {
      const outcome = await judged(cell, testdata("own_folder_target"));
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

// A store open at most once per process (an LMDB environment): cell 4's compare-and-swap
// wants a second writer, which is another process. Before, the cell opened a second handle
// in its own process, and FAILed the store on the refusal.
Deno.test({
  name: "a store open once per process passes cell 4",
  ...options,
  async fn() {
    const outcome = await judged(4, testdata("once_per_process_target"));
    strictEqual(outcome?.status, "PASS", outcome?.detail);
  },
});

// Error classes of the store's own that left `name` as Error's (`class X extends Error {}`)
// are typed refusals: cell 13's append to a missing session is refused, not failed. A
// thrown string is not: a caller cannot tell it from any other.
Deno.test({
  name:
    "a store whose error classes keep Error's name passes cell 13; one that throws strings fails it",
  ...options,
  async fn() {
    const typed = await judged(13, jsonl("unnamed_errors_target"));
    strictEqual(typed?.status, "PASS", typed?.detail);
    const strings = await judged(13, testdata("mutants/jsonl_string_refusals"));
    strictEqual(strings?.status, "FAIL", strings?.detail);
    ok(/the store threw a string, not an error/.test(strings.detail ?? ""), strings.detail);
  },
});

// A store handed out as a Proxy lists its methods among no keys: its capabilities are the
// contract's methods it answers, and cell 1 judges it instead of SKIPping it.
Deno.test({
  name: "a store that is a Proxy is judged on the methods it answers",
  ...options,
  async fn() {
    const outcome = await judged(1, jsonl("proxy_target"));
    strictEqual(outcome?.status, "PASS", outcome?.detail);
  },
});

// A store's periodic work runs inside some appends only (a compaction every eighth): cell 1's
// kill series walks the busiest of the first appends, so a compaction that replays the log
// lines its snapshot covers is caught under SIGKILL, and the correct one passes.
Deno.test({
  name:
    "cell 1's kill series walks a compaction: the correct store passes, one that doubles lines fails",
  ...options,
  async fn() {
    const correct = await judged(1, testdata("compacting_store/target"));
    strictEqual(correct?.status, "PASS", correct?.detail);
    const doubling = await judged(1, testdata("mutants/compaction_replays_covered_log"));
    strictEqual(doubling?.status, "FAIL", doubling?.detail);
    // The kill series catches it on every run; a random kill may land in the window first. The
    // row named may carry a text after its name.
    ok(
      /contiguous prefix m0\.\.m\d+, N >= acknowledged: row \d+ is "m\d+/.test(
        doubling.detail ?? "",
      ),
      doubling.detail,
    );
  },
});

/** A correct store that spells its answers as its driver or its habit does. */
interface Spelling {
  /** What the store does, after "a store that". */
  store: string;
  target: URL;
  /** The cells it must pass on the default leg. */
  cells: readonly CellId[];
  span?: number;
}

// Each is judged on what it says, not on how it spells it (`cells/contract/_answer_readings.ts`);
// what each failed before its spelling was read says why it is here.
const SPELLINGS: readonly Spelling[] = [
  // A store on libSQL answers its rowids as bigints.
  { store: "answers its ids as bigints", target: jsonl("bigint_target"), cells: [1, 6], span: 4 },
  // A driver's `null` for a row it lacks: a refused append to a missing session left nothing.
  { store: "answers null for a missing session", target: jsonl("null_none_target"), cells: [13] },
  // Query builders returned from methods that are not `async`: cells 1 and 13 FAILed it (ids
  // compared as bigints, `null` as a session, refusals untyped).
  { store: "answers thenables", target: jsonl("thenable_target"), cells: [1, 13] },
  // A message's `active` as stored, a guarded write's rows changed (bigints through libSQL):
  // cells 2, 3, 4, 7, 8, 10, 11 and 12 FAILed it (every rewound row read as active again).
  {
    store: "answers SQLite's integers for booleans",
    target: testdata("sqlite_integers_target"),
    cells: [4, 8, 10],
  },
  // A session's null fields absent (plain objects, JSON that omits empty fields), `undefined`
  // for a refused markAttempting: cells 2, 3, 5, 7, 8, 10 and 12 FAILed it (an open session
  // read as ended, a refused attempt as taken).
  {
    store: "leaves out its null values",
    target: testdata("omitted_nulls_target"),
    cells: [5, 10, 12],
  },
  // A `SessionNotFoundError` of its own, Node's `ENOENT`, a rejected `NotFoundError`: cells 4,
  // 8 and 13 FAILed it (a fork that never happened, a session never created: failed reads).
  {
    store: "throws not-found for a missing record",
    target: testdata("not_found_target"),
    cells: [4, 8, 13],
  },
  // `"42"`, an int64 in protobuf's JSON: cells 1, 4, 6, 8 and 9 FAILed it with losses it never
  // had (ids compared as strings: "10" sorted before "9").
  {
    store: "spells its integers in decimal",
    target: testdata("decimal_integers_target"),
    cells: [1, 6, 9],
  },
  // `PENDING`, `RESEND`, `COMPRESSION`: Java's enums serialised by name. Cells 2, 5, 7 and 12
  // FAILed it (a claimed handoff read as "RUNNING, not running"), cells 3, 6, 8 and 11 too (a
  // rotation's parent ended by `COMPRESSION` read as a rotation not whole). A message's role
  // as `USER`: cell 13 FAILed it ("session s's messages changed").
  {
    store: "names its states, actions and roles in upper case",
    target: testdata("upper_case_names_target"),
    cells: [2, 7, 8, 12, 13],
  },
  // Ids increase; where they start is the store's. Cell 6 FAILed it: "every returned id is a
  // positive integer".
  {
    store: "counts message ids from 0",
    target: testdata("zero_based_ids_target"),
    cells: [4, 6, 9],
  },
  // A check that speaks only of a violation: cells 1 to 12 FAILed it ("Cannot read properties
  // of undefined").
  {
    store: "answers nothing from its invariant check when all hold",
    target: testdata("quiet_invariants_target"),
    cells: [1, 2, 11],
  },
  // Expiries in Unix seconds, rounded up: a lease lasts up to a second longer than asked.
  // Cells 7 and 11 FAILed it ("the stale owner's publishCompressionChild was accepted"): they
  // judged a lease lapsed by the caller's clock.
  {
    store: "keeps its lease expiries in whole seconds",
    target: testdata("whole_second_leases_target"),
    cells: [7, 11],
  },
  // Obligation ids that are numbers (an integer key), looked up as given: cell 6 FAILed it
  // ("3 acknowledged obligation(s) lost") and cell 7 passed it a stringified id, which it
  // refused whatever its fence (a store ignoring fences passed).
  {
    store: "numbers its obligations",
    target: testdata("numeric_obligation_ids_target"),
    cells: [6, 7],
  },
  // Records as instances of a class, an ORM's entities (own fields) and models (getters of
  // their class): cells 4 and 9 FAILed it (a transcript read twice "changed": its rows'
  // classes differed), and every spelling inside one went unread (an entity's left-out
  // `null` fields: cells 3, 7, 8 and 10 FAILed that).
  {
    store: "answers its records as class instances",
    target: testdata("entity_rows_target"),
    cells: [4, 9],
  },
  {
    store: "leaves out null fields of its class instances",
    target: testdata("entity_nulls_target"),
    cells: [3, 8, 10],
  },
  // Fields named as its columns (`parent_session_id`, `delivery_fence`): cells 3, 5, 6, 7, 8,
  // 10 and 11 FAILed it (every acknowledged rotation "not whole", an obligation's fence lost).
  {
    store: "names its fields as its columns are named",
    target: testdata("snake_case_target"),
    cells: [3, 5, 10],
  },
  // None as a Go struct's JSON spells it (`""`, `0`, the zero struct for a record it lacks):
  // cells 2, 3, 4, 7, 8, 10, 12 and 13 FAILed it (an open session read as ended at the epoch,
  // "partial rotation", a zero struct read as a live continuation).
  {
    store: "spells none by Go's zero values",
    target: testdata("go_zero_values_target"),
    cells: [2, 4, 10],
  },
  // Rewound messages soft-deleted (`deletedAt` set, no `active`): cell 4 FAILed it ("row 3
  // (u2), rewound at step 5, is active again").
  {
    store: "soft-deletes the messages a rewind deactivates",
    target: testdata("soft_delete_target"),
    cells: [4],
  },
  // Lists in another order and message ids with gaps: the contract leaves both to the store,
  // and the cells that read lists and ids the most must not assume the reference's.
  {
    store: "answers its lists newest first",
    target: testdata("reordered_lists_target"),
    cells: [5, 12],
  },
  {
    store: "leaves gaps between its message ids",
    target: testdata("gapped_ids_target"),
    cells: [4, 9],
  },
  // A text holding a NUL refused with an error of its own class, as the contract allows (an
  // engine whose text type cannot hold one): cells 4 and 9 FAILed it (their writers ended on
  // the refusal instead of writing plain).
  {
    store: "refuses a text holding a NUL with an error of its own",
    target: testdata("refuses_nul_target"),
    cells: [1, 3, 4, 5, 9],
  },
  // A tool turn refused with an error of its own class, as the contract allows (a store whose
  // tool turns must name the call they answer): cells 1 and 9 FAILed it once they appended
  // the contract's four roles (their writers ended on the refusal).
  {
    store: "refuses a tool turn with an error of its own",
    target: testdata("refuses_lone_tool_turns_target"),
    cells: [1, 9],
  },
  // Its files in a data folder beside its path: each cell's stores get folders of their own.
  // Before they did, cells 3, 4, 7 to 9, 11 and 13 FAILed it (scenarios shared a folder).
  {
    store: "keeps its files in a data folder beside its path",
    target: testdata("data_folder_target"),
    cells: [3, 4, 7, 8, 9, 11, 13],
  },
];

for (const { store, target, cells, span } of SPELLINGS) {
  Deno.test({
    name: `a store that ${store} passes cell${cells.length > 1 ? "s" : ""} ${cells.join(", ")}`,
    ...options,
    async fn() {
      for (const cell of cells) {
        const outcome = await judged(cell, target, span);
        strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
      }
    },
  });
}

/** Cell 2 on the default leg with its stop and claim series. */
async function withSeries(target: URL) {
  const definitions = await CELLS[2]({
    target,
    leg: legNamed("default"),
    keepEvidence: false,
    raceSeries: "locks",
  });
  return (await runDefinitions(definitions))[0];
}

// A store that takes a lock of its own around each call (a lock file's flock; a lock
// directory, a rename of a folder holding its pid as proper-lockfile's mkdir lock): the
// stop series stop it before that lock too (the recorder counts flock, and a name made only
// if missing, as lock calls). Before they did, its competitors and racers were held out at
// every stop: with a flock cells 2, 3, 4, 5 and 7 to 11 were an ERROR, with a lock directory
// cell 2 (it has both, a racers' series, the claim, and a competitor's, the request) was an
// ERROR for the broken store too.
for (const [lock, kind] of [["flock", "a flock"], ["lockdir", "a lock directory"]] as const) {
  Deno.test({
    name:
      `a store that serialises its calls with ${kind} of its own gets verdicts from the stop series`,
    ...options,
    async fn() {
      const correct = await withSeries(testdata(`${lock}_serialised_target`));
      strictEqual(correct?.status, "PASS", correct?.detail);
      // Checking a request under one hold of its lock and writing it under another: the stop
      // before the second hold lets another process request and claim in between.
      const broken = await withSeries(testdata(`${lock}_check_then_request`));
      strictEqual(broken?.status, "FAIL", broken?.detail);
      ok(
        /^requestHandoff stopped at lock call \d+: .*acknowledged/.test(broken?.detail ?? ""),
        broken?.detail,
      );
    },
  });
}

// Obligation ids that are numbers: cell 7's stop series passed them back as strings, the
// store found none, no takeover landed, and nothing was judged (an ERROR).
Deno.test({
  name: "a store that numbers its obligations gets verdicts from cell 7's stop series",
  ...options,
  async fn() {
    const [outcome] = await runDefinitions(
      await CELLS[7]({
        target: testdata("numeric_obligation_ids_target"),
        leg: legNamed("default"),
        keepEvidence: false,
        raceSeries: "locks",
        owners: ["outboxAttempt"],
      }),
    );
    strictEqual(outcome?.status, "PASS", outcome?.detail);
  },
});

// A store whose writes contend (a lock of its own, waited for one second, sometimes held
// longer) refuses some with BusyDeadlineError, as the contract allows beside other writers.
// Before the children made a refused call again, cell 9's two writers ended on it, cell 10's
// racers failed ("5 racer(s) failed"), cell 2's claimants crashed on a refused claim ("7
// claimant(s) crashed") and cell 8's fresh process on a refused resolveResumeSessionId. One
// whose open keeps that lock 1.5 s refused cell 2's judge, reading beside the race: "a request
// is seen at once: Cannot write: the store stayed locked for 1001 ms". The runs mostly wait on
// the stores' locks, each on stores of its own: they run at once.
Deno.test({
  name:
    "a store that refuses writes beside other writers as busy passes cells 2, 8, 9 and 10; one that refuses opens so, cell 2",
  ...options,
  async fn() {
    const runs = [
      ...([2, 8, 9, 10] as const).map((cell) => ["contending_target", cell] as const),
      ["slow_open_target", 2] as const,
    ];
    const outcomes = await Promise.all(runs.map(([store, cell]) => judged(cell, testdata(store))));
    runs.forEach(([store, cell], i) => {
      strictEqual(outcomes[i]?.status, "PASS", `${store}: cell ${cell}: ${outcomes[i]?.detail}`);
    });
  },
});

// F5's short-lived processes took the same store's busy refusal of their open or of a
// session's creation for a failure ("short-1 threw BusyDeadlineError"); they make those again.
Deno.test({
  name: "a store that refuses writes beside other writers as busy passes F5",
  ...options,
  async fn() {
    const target = testdata("contending_target").href;
    const verdict = await runOn(shortLivedClause, target, "default");
    strictEqual(verdict.status, "PASS", verdict.checks?.join("\n"));
  },
});

// A store kept in a worker loads its own copy of the reference's modules, where a cell's
// child's own crash points (sender:afterSend) are not listed. Before the store took them for
// another's, it refused to open under them and cell 5 FAILed it.
Deno.test({
  name: "a store kept in a Web Worker passes cell 5 under the child's own crash points",
  ...options,
  async fn() {
    const outcome = await judged(5, new URL("./testdata/worker_store/target.ts", import.meta.url));
    strictEqual(outcome?.status, "PASS", outcome?.detail);
  },
});

// A store that signals another process (Deno.kill, as a lock holder's liveness check does)
// needs a permission the children lack until it is declared. Before the refusal was told
// apart, cells 3 and 11 FAILed this correct store on Deno's NotCapable.
Deno.test({
  name: "a store refused a permission in a child gets an ERROR naming it, and passes once declared",
  ...options,
  async fn() {
    const refused = await judged(3, testdata("signalling_target"));
    strictEqual(refused?.status, "ERROR", refused?.detail);
    ok(
      /^The store was refused a permission .*tryAcquireCompressionLock threw NotCapable: Requires run access.*signals: true/
        .test(refused?.detail ?? ""),
      refused?.detail,
    );
    const declared = await judged(3, testdata("signalling_declared_target"));
    strictEqual(declared?.status, "PASS", declared?.detail);
    // Refused at open, in the leg probe: before, the store "could not open" and FAILed.
    const atOpen = await judged(1, testdata("signalling_open_target"));
    strictEqual(atOpen?.status, "ERROR", atOpen?.detail);
    ok(
      /^The store was refused a permission .*openStore threw NotCapable: Requires run access/.test(
        atOpen?.detail ?? "",
      ),
      atOpen?.detail,
    );
  },
});
