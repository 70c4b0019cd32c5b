// The fault tier's mutants: each planted store, what it breaks, the clause that must catch
// it, and the text of the failed check that shows the catch.

/** A mutant of the fault tier. */
export interface FaultMutantSpec {
  /** The module's name in this folder, without `.ts`. */
  name: string;
  /** What it breaks, in words. */
  breaks: string;
  /** The fault clause that must catch it. */
  clause: "F1" | "F2" | "F3" | "F4" | "F5";
  /** Matches one of the clause's failed checks on the mutant. */
  check: RegExp;
  /** The legs it is judged on (default: every leg); a store that is not SQLite has one. */
  legs?: readonly ("default" | "delete" | "wal")[];
  /** The journal mode the file must have run in for the defect to do harm (default any). */
  harmsIn?: "wal";
}

/** The mutants the fault clauses must catch. */
export const FAULT_MUTANTS: readonly FaultMutantSpec[] = [
  {
    name: "swallows_enospc",
    breaks: "swallows a failed append's storage error (a full disk) and returns a made-up id",
    clause: "F1",
    check:
      /^write ENOSPC \(the disk stays full\) at call \d+ .*: after the fault: acknowledged "fault-[^"]+" is lost$/,
  },
  {
    name: "jsonl_fsync_retry",
    breaks: "retries a failed fdatasync and acknowledges when the retry succeeds",
    clause: "F1",
    check:
      /^fsync EIO at call \d+ .*: after a power loss \(state \d+\): (acknowledged "fault-[^"]+" is lost|a fresh process cannot open the store: CorruptStoreError)/,
    legs: ["default"],
  },
  {
    name: "jsonl_string_refusals",
    breaks: "refuses a failed append by throwing a string, not an error a caller can tell apart",
    clause: "F1",
    check: /threw an untyped Error: the store threw a string, not an error: "/,
    legs: ["default"],
  },
  {
    name: "read_skips_corrupt_rows",
    breaks: "skips the rows of a corrupt page on read and serves the rest as the transcript",
    clause: "F2",
    check:
      /^page damage \(.*\): the read served a transcript as whole: \d+ of 30 acknowledged messages: \d+ acknowledged missing/,
  },
  {
    name: "jsonl_skips_corrupt_record",
    breaks: "skips an unparsable record of its log and serves the rest",
    clause: "F2",
    check:
      /^middle record damage \(.*\): the read served a transcript as whole: 29 of 30 acknowledged messages: 1 acknowledged missing/,
    legs: ["default"],
  },
  {
    name: "open_counter_ids_replace",
    breaks: "numbers appends from a counter read at open and overwrites with INSERT OR REPLACE",
    clause: "F5",
    check: /acknowledged append "[^"]+" \(id \d+, session [^)]+\) is stored (nowhere|as id)/,
  },
  {
    name: "peeks_with_second_descriptor",
    breaks: "peeks at its file with a second descriptor and closes it, dropping SQLite's locks",
    clause: "F3",
    check:
      /^process A: #\d+ close ".*\/store\.db" \(handle \d+\) while handle \d+ \(descriptor \d+\) holds fcntl locks on it: the process's locks on the file are dropped$/,
    // In DELETE mode no lock is held between transactions: the peek drops none.
    legs: ["default", "wal"],
    harmsIn: "wal",
  },
  {
    name: "checks_through_second_sqlite",
    breaks:
      "checks its file at open through a second copy of SQLite, whose close drops the first's locks",
    clause: "F3",
    check:
      /^process [AB]: #\d+ dlopen ".*second-sqlite-[^"]*\.so" while ".*" is loaded: a second SQLite library in a process that opens the store's files/,
  },
  {
    name: "deletes_stale_sidecars",
    breaks: "deletes the -wal, -shm and -journal it takes for stale at open",
    clause: "F4",
    check:
      /^process B: #\d+ unlink ".*\/store\.db-(wal|journal)" while process \d+ has it open \(descriptor \d+\): that process goes on with a file no later opener sees$/,
  },
];
