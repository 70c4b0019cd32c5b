// The registry of known failure patterns, how a check attaches one, and the busy
// classification on the errors real SQLite bindings throw. Each pattern on a real FAIL of a
// store that has it: diagnosed_fails_test.ts.
import { DatabaseSync } from "node:sqlite";
import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { HarnessError } from "../../harness/harness_error.ts";
import { Database } from "../../session_db/sqlite/mod.ts";
import { tempDir } from "../../session_db/_test_helpers.ts";
import {
  diagnosed,
  DiagnosedError,
  DIAGNOSES,
  diagnosesOf,
  diagnosis,
  diagnosisLines,
  isBusyError,
  patternsOf,
} from "./diagnoses.ts";

Deno.test("every pattern has a one-line cause and fix", () => {
  ok(Object.keys(DIAGNOSES).length >= 5);
  for (const [pattern, { cause, fix }] of Object.entries(DIAGNOSES)) {
    ok(/^[a-z]+(-[a-z]+)+$/.test(pattern), pattern);
    for (const line of [cause, fix]) {
      ok(line.length > 20 && !line.includes("\n") && !line.endsWith("."), `${pattern}: ${line}`);
    }
  }
});

Deno.test("a check attaches its pattern only when it fails and its evidence shows it", () => {
  strictEqual(diagnosed("busy-untyped", () => 7), 7);
  const error = (() => {
    try {
      diagnosed("claim-without-predicate", () => ok(false, "2 claimants won"));
    } catch (e) {
      return e;
    }
  })();
  ok(error instanceof DiagnosedError);
  strictEqual(error.pattern, "claim-without-predicate");
  strictEqual(error.message, "2 claimants won");
  ok(error.cause instanceof Error, "the check's own error is its cause");
  // No pattern given (the evidence does not show one): the error passes unchanged.
  const plain = new Error("0 claimants won");
  throws(() =>
    diagnosed(false, () => {
      throw plain;
    }), (e) => e === plain);
  // The suite's own failure is never the store's pattern.
  const harness = new HarnessError("no kill landed");
  throws(() =>
    diagnosed("ack-before-commit", () => {
      throw harness;
    }), (e) => e === harness);
});

Deno.test("an asynchronous check attaches its pattern too", async () => {
  const failing = diagnosed(
    "lock-held-past-crash",
    () => Promise.reject(new Error("taken: false")),
  );
  const error = await failing.then(() => undefined, (e) => e);
  deepStrictEqual(patternsOf([error]), ["lock-held-past-crash"]);
});

Deno.test("patterns are collected from cause chains, each once, and described", () => {
  const a = new DiagnosedError("ack-before-commit", "lost m7");
  const b = new Error("step", { cause: new DiagnosedError("ack-before-commit", "lost m9") });
  const c = new Error("step", { cause: new DiagnosedError("rotation-not-atomic", "orphan") });
  deepStrictEqual(patternsOf([a, b, new Error("other"), c]), [
    "ack-before-commit",
    "rotation-not-atomic",
  ]);
  deepStrictEqual(diagnosesOf([c]), [diagnosis("rotation-not-atomic")]);
  strictEqual(
    diagnosisLines([diagnosis("busy-untyped")])[0],
    `diagnosis busy-untyped: ${DIAGNOSES["busy-untyped"].cause}; fix: ${
      DIAGNOSES["busy-untyped"].fix
    }`,
  );
});

/** The error a write gets while another connection holds the write lock. */
function busyFrom(write: () => void): unknown {
  try {
    write();
  } catch (error) {
    return error;
  }
  throw new Error("the write was not refused: the lock was not held");
}

// Each binding against itself: two copies of SQLite in one process do not see each
// other's locks (POSIX locks are per process).
Deno.test("SQLite's busy error is recognised from this project's binding and node:sqlite", () => {
  using tmp = tempDir();
  const dir = tmp.path;
  const holder = new Database(`${dir}/ours.db`);
  const other = new Database(`${dir}/ours.db`);
  const nodeHolder = new DatabaseSync(`${dir}/node.db`);
  const node = new DatabaseSync(`${dir}/node.db`, { timeout: 0 });
  try {
    holder.exec("CREATE TABLE t (x)");
    nodeHolder.exec("CREATE TABLE t (x)");
    other.exec("PRAGMA busy_timeout = 0");
    holder.exec("BEGIN IMMEDIATE");
    nodeHolder.exec("BEGIN IMMEDIATE");
    const ours = busyFrom(() => other.exec("INSERT INTO t VALUES (1)"));
    ok(isBusyError(ours), `not busy: ${ours}`);
    const theirs = busyFrom(() => node.exec("INSERT INTO t VALUES (1)"));
    ok(isBusyError(theirs), `not busy: ${theirs}`);
    holder.exec("ROLLBACK");
    nodeHolder.exec("ROLLBACK");
    // Other errors of the same bindings are not busy.
    ok(!isBusyError(busyFrom(() => other.exec("INSERT INTO missing VALUES (1)"))));
    ok(!isBusyError(busyFrom(() => node.exec("INSERT INTO missing VALUES (1)"))));
  } finally {
    node.close();
    nodeHolder.close();
    other.close();
    holder.close();
  }
  // Codes by name (libSQL), and a store whose errors carry only SQLite's message (Deno KV).
  ok(
    isBusyError(
      Object.assign(new Error("SQLITE_BUSY: database is locked"), { code: "SQLITE_BUSY" }),
    ),
  );
  ok(isBusyError(new TypeError("database is locked")));
  // The typed refusal the contract asks for is not the untyped busy error.
  const refusal = new Error("busy for 60 s");
  refusal.name = "BusyDeadlineError";
  ok(!isBusyError(refusal));
});
