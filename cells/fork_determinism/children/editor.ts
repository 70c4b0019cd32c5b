// Cell 4's child: edit/rewind/fork cycles on session "main". Before each step it reads
// the active transcript, journals an intent (the step and the transcript it yields if
// it completes), runs the step, then journals the acknowledged step with that
// transcript as [id, content] pairs. Rewinds (compare-and-swap on the active ids) keep
// the transcript short; a fork journals its branch and the contents it must hold. With
// `stop` (fork or rewind) it stops right after journaling the first acknowledged step of
// that kind and waits to be killed, with no further write and no close. A resumed one (on a
// recovered file) numbers its steps from `start` and SIGKILLs itself right after its n-th
// acknowledged step. Each append's text carries one of cell 1's texts (`_edit_text.ts`), so
// that a branch must copy them as written; one the store refuses with a typed error is
// appended plain, and the journals keep the text meant (as the judge reads a plain one).
import { AckWriter } from "../../../harness/ack_journal.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import {
  childArgs,
  lifetimeGuard,
  marked,
  openStoreFor,
  waitToBeKilled,
} from "../../contract/child_runtime.ts";
import { editText, writtenEdit } from "../_edit_text.ts";
import { refusedText, writtenOrPlain } from "../../engine/_texts.ts";

const [target, dbPath, acksPath, intentsPath, seed, stop, start = "0", selfKill] = childArgs(
  5,
  "editor.ts <target> <db> <acks> <intents> <seed> [stop after: fork|rewind|-] [first step] [kill itself after this many acknowledged steps]",
);
const killAfter = selfKill === undefined ? Infinity : Number(selfKill);
const store = await openStoreFor(target!, dbPath!);
await store.createSession("main");
const acks = new AckWriter(acksPath!);
const intents = new AckWriter(intentsPath!);

// mulberry32: a small seeded generator, so a run can be replayed from its seed.
let state = Number(seed) >>> 0;
function random(): number {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

type Row = [number, string];
const isUser = (content: string) => content.startsWith("u") || content.startsWith("e");
const guard = lifetimeGuard();
let editNext = false;
let rewinds = 0;
for (let s = Number(start);; s++) {
  if (s - Number(start) >= killAfter) killSelf();
  guard();
  // The transcript as written: a text the store changed is the judge's finding, not a step's.
  const current: Row[] = (await store.getMessages("main")).map((
    m,
  ) => [m.id, writtenEdit(m.content ?? "")]);
  const users = current.filter(([, content]) => isUser(content));
  if (!editNext && s % 7 === 4 && current.length > 0) {
    const [at] = pick(current);
    const step = {
      s,
      op: "fork",
      branch: `branch-${s}`,
      at,
      expectBranch: current.filter(([id]) => id <= at).map(([, content]) => content),
      expect: current,
    };
    intents.write(step);
    await marked("forkSession", () => store.forkSession!("main", at, step.branch));
    acks.write(step);
    if (stop === "fork") break;
  } else if (!editNext && (s % 7 === 5 || current.length >= 8) && users.length > 0) {
    // Every other rewind keeps a non-empty prefix (never the first user turn), so a
    // store that re-inserts the kept prefix shows it from the first rewind on.
    const [targetId] = pick(rewinds++ % 2 === 0 && users.length >= 2 ? users.slice(1) : users);
    const step = {
      s,
      op: "rewind",
      target: targetId,
      deactivated: current.filter(([id]) => id >= targetId).map(([id]) => id),
      expect: current.filter(([id]) => id < targetId),
    };
    intents.write(step);
    await marked("rewindToMessage", () =>
      store.rewindToMessage!("main", targetId, {
        expectedActiveIds: current.map(([id]) => id),
      }));
    acks.write(step);
    if (stop === "rewind") break;
    editNext = true;
  } else {
    // After a rewind, the edited user turn; otherwise user and assistant alternate.
    const user = editNext || current.length === 0 || !isUser(current.at(-1)![1]);
    const name = `${editNext ? "e" : user ? "u" : "a"}${s}`;
    const content = editText(name, s);
    intents.write({ s, op: "append", expect: [...current, [null, content]] });
    // A text refused with a typed error is written plain; the journals keep the text meant.
    const id = await writtenOrPlain((plain) =>
      store.appendMessage("main", {
        role: user ? "user" : "assistant",
        content: plain ? refusedText(name) : content,
      })
    );
    acks.write({ s, op: "append", expect: [...current, [id, content]] });
    editNext = false;
  }
}
// Only a stop leaves the loop: the acknowledged step was the last write.
waitToBeKilled(`${acksPath}.ready`);
