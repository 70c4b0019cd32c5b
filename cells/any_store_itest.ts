// Any kind of store is judgeable: a JSON-lines log (not SQLite) registers without
// throwing, runs every cell it has the methods for on the default leg, and gets the
// journal-mode legs SKIPPED as not applicable; a broken one still fails cell 1. A JSON
// snapshot replaced by rename, a store whose path is a folder, one whose ids are bigints, one
// whose error classes keep Error's name, one handed out as a Proxy, one that compacts its log
// into a snapshot and one that answers null for a missing session are judged as well.
import { ok, strictEqual } from "node:assert/strict";
import { currentLeg, type LegName } from "../harness/legs.ts";
import { type CellId, CELLS } from "./register.ts";
import { runDefinitions } from "./engine/run_definitions.ts";

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

// A store whose ids are bigints (a store on libSQL answers its rowids so) is judged on its
// durability, not on the type of its integers.
Deno.test({
  name: "a store that answers its ids as bigints passes cells 1 and 6",
  ...options,
  async fn() {
    for (const cell of [1, 6] as const) {
      const outcome = await judged(cell, jsonl("bigint_target"), 4);
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
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
    // The kill series catches it on every run; a random kill may land in the window first.
    ok(
      /contiguous prefix m0\.\.m\d+, N >= acknowledged: row \d+ is "m\d+"/.test(
        doubling.detail ?? "",
      ),
      doubling.detail,
    );
  },
});

// A store whose driver answers `null` for a row it lacks says "no such session" with it: a
// refused append to a missing session left nothing, and cell 13 reads it so.
Deno.test({
  name: "a store whose getSession answers null for a missing session passes cell 13",
  ...options,
  async fn() {
    const outcome = await judged(13, jsonl("null_none_target"));
    strictEqual(outcome?.status, "PASS", outcome?.detail);
  },
});

// A store whose methods answer thenables that are not promises (query builders returned
// from methods that are not `async`) is read through them as through promises: its bigint
// ids, its `null` for a missing session and its error classes. Before, cells 1 and 13 FAILed
// the correct store (ids compared as bigints, `null` as a session, refusals untyped).
Deno.test({
  name: "a store whose methods answer thenables passes cells 1 and 13",
  ...options,
  async fn() {
    for (const cell of [1, 13] as const) {
      const outcome = await judged(cell, jsonl("thenable_target"));
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

// A store that answers with SQLite's integers where the contract has booleans (a message's
// `active` flag as stored, a guarded write's rows changed; as bigints through libSQL) is read
// as if it said `false` and `true`. Before, cells 2, 3, 4, 7, 8, 10, 11 and 12 FAILed the
// correct store (every rewound row read as active again, a refused reopen as done).
Deno.test({
  name: "a store that answers SQLite's integers for booleans passes cells 4, 8 and 10",
  ...options,
  async fn() {
    for (const cell of [4, 8, 10] as const) {
      const outcome = await judged(cell, testdata("sqlite_integers_target"));
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

// A store that says "none" by leaving a value out (a session's null fields absent, as plain
// objects or JSON that omits empty fields have them; `undefined` for a refused markAttempting
// and for a session without a handoff) is read as if it said `null`. Before, cells 2, 3, 5,
// 7, 8, 10 and 12 FAILed the correct store (an open session read as ended, a refused attempt
// as taken, no handoff as a changed one).
Deno.test({
  name: "a store that leaves out its null values passes cells 5, 10 and 12",
  ...options,
  async fn() {
    for (const cell of [5, 10, 12] as const) {
      const outcome = await judged(cell, testdata("omitted_nulls_target"));
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

// A store that says "no such record" by throwing (a `SessionNotFoundError` of its own, Node's
// `ENOENT`, a rejected `NotFoundError`) where the contract's none is `undefined` is read as if
// it answered `undefined`. Before, cells 4, 8 and 13 FAILed the correct store (a fork that
// never happened, no live continuation, a session that never existed: each read as a failure).
Deno.test({
  name: "a store that throws not-found for a missing record passes cells 4, 8 and 13",
  ...options,
  async fn() {
    for (const cell of [4, 8, 13] as const) {
      const outcome = await judged(cell, testdata("not_found_target"));
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

// A store that spells the contract's integers in decimal (`"42"`: an int64 in protobuf's JSON)
// is read as if it answered numbers. Before, cells 1, 4, 6, 8 and 9 FAILed the correct store
// with losses it never had (ids compared as strings: "10" sorted before "9").
Deno.test({
  name: "a store that spells its integers in decimal passes cells 1, 6 and 9",
  ...options,
  async fn() {
    for (const cell of [1, 6, 9] as const) {
      const outcome = await judged(cell, testdata("decimal_integers_target"));
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

// A store counting message ids from 0 keeps the contract (ids increase; where they start is
// the store's). Before, cell 6 FAILed it: "every returned id is a positive integer".
Deno.test({
  name: "a store that counts message ids from 0 passes cells 4, 6 and 9",
  ...options,
  async fn() {
    for (const cell of [4, 6, 9] as const) {
      const outcome = await judged(cell, testdata("zero_based_ids_target"));
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

// A store whose checkInvariants answers nothing when every invariant holds (a procedure that
// speaks only of a violation) is read as if it answered `[]`. Before, cells 1 to 12 FAILed
// the correct store ("Cannot read properties of undefined").
Deno.test({
  name: "a store whose invariant check answers nothing when all hold passes cells 1, 2 and 11",
  ...options,
  async fn() {
    for (const cell of [1, 2, 11] as const) {
      const outcome = await judged(cell, testdata("quiet_invariants_target"));
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

// A store that keeps its files in a data folder beside its path reads every path of one
// folder as one store: each cell's stores get folders of their own. Before they did,
// cells 3, 4, 7 to 9, 11 and 13 FAILed it (their scenarios' stores shared the run's folder).
Deno.test({
  name: "a store kept in a data folder beside its path passes every cell",
  ...options,
  async fn() {
    for (const cell of [3, 4, 7, 8, 9, 11, 13] as const) {
      const outcome = await judged(cell, testdata("data_folder_target"));
      strictEqual(outcome?.status, "PASS", `cell ${cell}: ${outcome?.detail}`);
    }
  },
});

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
