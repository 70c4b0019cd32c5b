/**
 * The crash harness: permission-scoped child processes, file barriers, bounded waits
 * that surface a dead child's stderr, acknowledgement journals, kill-while-alive,
 * disjoint exit codes, journal-mode legs with their on-disk audit, and evidence.
 *
 * @example
 * ```ts
 * import { readAckJournal, waitFor } from "./mod.ts";
 * const path = `${Deno.makeTempDirSync()}/acks.jsonl`;
 * Deno.writeTextFileSync(path, '{"i":0}\n{"i":1}\n{"i":');
 * await waitFor(() => readAckJournal(path).length === 2, { what: "two acks", deadlineMs: 1000 });
 * ```
 *
 * @module
 */
export * from "./child.ts";
export * from "./wait_for.ts";
export * from "./barrier.ts";
export * from "./ack_journal.ts";
export * from "./legs.ts";
export * from "./evidence.ts";
export * from "./db_audit.ts";
export * from "./self_kill.ts";
export * from "./seeded_random.ts";
export * from "./permissions.ts";
export * from "./harness_error.ts";
export * from "./process_tree.ts";
