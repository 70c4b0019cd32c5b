// The crash sweep's child. Three modes:
//   setup <target> <db> <seed>   seeds the template store; prints the store's methods and
//                                the target's crash points as one JSON line
//   owner <target> <db> <seed>   leaves open obligations owned by this (then dead) process
//   run <target> <db> <intents> <acks> <seed> <program>
//                                runs the program (operations joined by "+"), journaling an
//                                intent before each operation and the acknowledgement after
//                                it returned; SESSION_DB_CRASH_AT kills it at the point
import { AckWriter } from "../../../harness/ack_journal.ts";
import { loadTarget } from "../../../cells/target.ts";
import { childArgs, openStoreFor } from "../../../cells/child_runtime.ts";
import {
  parseProgram,
  ProgramRunner,
  seedDeadOwner,
  seedStore,
  type SweepStore,
} from "../_program.ts";

const USAGE = "_child.ts setup|owner <target> <db> <seed> | run <target> <db> " +
  "<intents> <acks> <seed> <program>";
const [mode, target, dbPath] = childArgs(4, USAGE);
const store = await openStoreFor(target!, dbPath!) as SweepStore;

if (mode === "setup") {
  await seedStore(store, Number(Deno.args[3]));
  const methods: string[] = [];
  for (let o: object | null = store; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (typeof (store as unknown as Record<string, unknown>)[name] === "function") {
        methods.push(name);
      }
    }
  }
  const crashPoints = (await loadTarget(target!)).crashPoints?.() ?? [];
  await store.close();
  console.log(JSON.stringify({ methods: [...new Set(methods)], crashPoints }));
} else if (mode === "owner") {
  await seedDeadOwner(store, Number(Deno.args[3]));
  await store.close();
} else if (mode === "run") {
  const [, , , intentsPath, acksPath, seed, spec] = childArgs(7, USAGE);
  const program = parseProgram(spec!);
  const intents = new AckWriter(intentsPath!);
  const acks = new AckWriter(acksPath!);
  const runner = new ProgramRunner(store, Number(seed));
  for (const [i, op] of program.entries()) {
    intents.write({ i, op });
    const result = await runner.run(op, i);
    acks.write({ i, op, result });
  }
  await store.close();
} else {
  console.error(`usage: ${USAGE}`);
  Deno.exit(2);
}
