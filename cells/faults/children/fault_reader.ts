// The fault tier's reader: a fresh process with no fault opens each state (the files a
// faulted run left, or a power loss after it may leave), reads the program's session and,
// when asked, creates a session of its own, appends to it and reads that back (the store
// works again once the disk does, or refuses with a typed error).
import { childArgs, openStoreFor } from "../../contract/child_runtime.ts";
import { answerOf } from "../../contract/typed.ts";
import type { Store } from "../../contract/target.ts";
import { FAULT_SESSION } from "../_program.ts";
import type { ReadJob, ReadResult } from "../_reads.ts";

const [target, jobsPath, outPath] = childArgs(3, "fault_reader.ts <target> <jobs> <out>");
const jobs = JSON.parse(Deno.readTextFileSync(jobsPath!)) as ReadJob[];

/** The session the extra append goes to: a new one, so the program's fate does not matter. */
const AFTER_SESSION = `${FAULT_SESSION}-after`;

async function texts(
  store: Store,
  session = FAULT_SESSION,
): Promise<NonNullable<ReadResult["read"]>> {
  const answer = await answerOf(() => store.getMessages(session));
  if (answer.threw) return { threw: `${answer.name}: ${answer.message}` };
  const rows = answer.value as { id: number; content: string }[];
  return { texts: rows.map((r) => r.content), ids: rows.map((r) => Number(r.id)) };
}

async function readOne(job: ReadJob): Promise<ReadResult> {
  let store: Store;
  try {
    store = await openStoreFor(target!, job.db, { busy: "thrown" });
  } catch (error) {
    const name = error instanceof Error ? error.name : typeof error;
    return { db: job.db, open: `${name}: ${error instanceof Error ? error.message : error}` };
  }
  const result: ReadResult = { db: job.db, read: await texts(store) };
  if (typeof store.checkInvariants === "function") {
    const answer = await answerOf(() => store.checkInvariants!());
    result.invariants = answer.threw
      ? [`checkInvariants threw ${answer.name}: ${answer.message}`]
      : answer.value as string[];
  }
  if (job.append) {
    const answer = await answerOf(async () => {
      await store.createSession(AFTER_SESSION);
      return await store.appendMessage(AFTER_SESSION, { role: "user", content: job.append! });
    });
    result.append = answer.threw
      ? { threw: { name: answer.name ?? "?", message: answer.message ?? "" } }
      : { acked: true };
    if (!answer.threw) result.readBack = await texts(store, AFTER_SESSION);
  }
  await answerOf(() => store.close());
  return result;
}

const results: ReadResult[] = [];
for (const job of jobs) results.push(await readOne(job));
Deno.writeTextFileSync(outPath!, JSON.stringify(results));
