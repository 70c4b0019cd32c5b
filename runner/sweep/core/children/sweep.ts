// The crash sweep's child. Four modes:
//   setup <target> <db> <seed>   seeds the template store; prints the store's methods, the
//                                target's crash points and, when it may read
//                                /proc/self/maps, whether the store loaded this project's
//                                SQLite library (DENO_SQLITE_PATH), as one JSON line
//   owner <target> <db> <seed>   leaves open obligations owned by this (then dead) process
//   run <target> <db> <intents> <acks> <seed> <program>
//                                runs the program (operations joined by "+"), journaling an
//                                intent before each operation and the acknowledgement after
//                                it returned; SESSION_DB_CRASH_AT kills it at the point
//   resume <target> <db> <acks> <seed> <operations>
//                                a fresh process on a recovered store: continues it with
//                                the operations (a claim only while a handoff is parked),
//                                journaling each acknowledgement, then closes it
import { AckWriter } from "../../../../harness/ack_journal.ts";
import { loadTarget, methodsOf } from "../../../../cells/contract/target.ts";
import { childArgs, openStoreFor } from "../../../../cells/contract/child_runtime.ts";
import {
  CONTINUATION_INDEX,
  parseProgram,
  ProgramRunner,
  seedDeadOwner,
  seedStore,
  type SweepStore,
} from "../program.ts";
import { printReport } from "../../../../internal/report_line.ts";

const USAGE = "sweep.ts setup|owner <target> <db> <seed> | run <target> <db> " +
  "<intents> <acks> <seed> <program> | resume <target> <db> <acks> <seed> <operations>";
const [mode, target, dbPath] = childArgs(4, USAGE);

/**
 * Under an injected fault an operation (or the open) throws: a run journals what it
 * threw among its intents, closes what it can and exits with this code, so that the
 * judge tells a typed refusal from a process that died.
 */
const THREW_EXIT = 3;

async function threw(
  intents: AckWriter | undefined,
  at: { i: number; op: string; store?: SweepStore },
  error: unknown,
): Promise<never> {
  if (!intents) throw error;
  const name = error instanceof Error ? error.name : typeof error;
  const message = error instanceof Error ? error.message : String(error);
  intents.write({ i: at.i, op: at.op, threw: name, message: message.slice(0, 300) });
  console.error(`${at.op} threw ${name}: ${message}`);
  intents.close();
  try {
    await at.store?.close();
  } catch { /* the error above is the one judged */ }
  Deno.exit(THREW_EXIT);
}

// A run's journal of intents, opened before the store so that a failed open is journalled.
const intents = mode === "run" ? new AckWriter(childArgs(7, USAGE)[3]!) : undefined;
const store = await (openStoreFor(target!, dbPath!) as Promise<SweepStore>).catch((error) =>
  threw(intents, { i: -1, op: "open" }, error)
);

/** Whether this process mapped the SQLite library the leg names (unknown without the permission). */
function loadsLibrary(): boolean | undefined {
  const library = Deno.env.get("DENO_SQLITE_PATH");
  if (Deno.permissions.querySync({ name: "read", path: "/proc/self/maps" }).state !== "granted") {
    return undefined;
  }
  if (!library || Deno.build.os !== "linux") return undefined;
  return Deno.readTextFileSync("/proc/self/maps").includes(Deno.realPathSync(library));
}

if (mode === "setup") {
  await seedStore(store, Number(Deno.args[3]));
  const methods = methodsOf(store);
  const crashPoints = (await loadTarget(target!)).crashPoints?.() ?? [];
  const binding = loadsLibrary();
  await store.close();
  printReport({
    methods,
    crashPoints,
    ...(binding !== undefined ? { binding } : {}),
  });
} else if (mode === "owner") {
  await seedDeadOwner(store, Number(Deno.args[3]));
  await store.close();
} else if (mode === "run") {
  const [, , , , acksPath, seed, spec] = childArgs(7, USAGE);
  const program = parseProgram(spec!);
  const acks = new AckWriter(acksPath!);
  const runner = new ProgramRunner(store, Number(seed));
  for (const [i, op] of program.entries()) {
    intents!.write({ i, op });
    let result: unknown;
    try {
      result = await runner.run(op, i);
    } catch (error) {
      await threw(intents, { i, op, store: store }, error);
    }
    acks.write({ i, op, result });
  }
  try {
    await store.close();
  } catch (error) {
    await threw(intents, { i: program.length, op: "close" }, error);
  }
} else if (mode === "resume") {
  const [, , , acksPath, seed, spec] = childArgs(6, USAGE);
  const acks = new AckWriter(acksPath!);
  const runner = await ProgramRunner.resumed(store, Number(seed));
  for (const [n, op] of parseProgram(spec!).entries()) {
    if (op === "claim" && !runner.canClaim) continue;
    const i = CONTINUATION_INDEX + n;
    const result = await runner.run(op, i);
    acks.write({ i, op, result });
  }
  await store.close();
} else {
  console.error(`usage: ${USAGE}`);
  Deno.exit(2);
}
