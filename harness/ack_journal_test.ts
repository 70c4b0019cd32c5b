import { deepStrictEqual, throws } from "node:assert/strict";
import { AckJournalError, AckWriter, countAcks, readAckJournal } from "./ack_journal.ts";

Deno.test("the ack journal drops a torn final line only", () => {
  const dir = Deno.makeTempDirSync();
  const path = `${dir}/acks.jsonl`;
  const writer = new AckWriter(path);
  writer.write({ i: 0, rowid: 1 });
  writer.write({ i: 1, rowid: 2 });
  writer.close();
  Deno.writeTextFileSync(path, '{"i":2,"ro', { append: true });
  deepStrictEqual(readAckJournal(path), [{ i: 0, rowid: 1 }, { i: 1, rowid: 2 }]);
  deepStrictEqual(countAcks(path), 2);
  Deno.writeTextFileSync(`${dir}/bad.jsonl`, '{"i":0}\nnot json\n{"i":2}\n');
  throws(() => readAckJournal(`${dir}/bad.jsonl`), AckJournalError);
  deepStrictEqual(readAckJournal(`${dir}/missing.jsonl`), []);
  Deno.removeSync(dir, { recursive: true });
});
