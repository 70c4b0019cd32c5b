// The editor's texts, and how a judge reads one back: as written, plain after a typed refusal,
// or changed.
import { match, strictEqual } from "node:assert/strict";
import { editChange, editText, writtenEdit } from "./_edit_text.ts";
import { refusedText, writtenOrPlain } from "../engine/_texts.ts";

Deno.test("writtenEdit: a stored text names the text meant, written, cut or plain", () => {
  const meant = editText("u4", 4);
  strictEqual(meant, "u4\u0000after a NUL");
  strictEqual(writtenEdit(meant), meant);
  strictEqual(writtenEdit("u4"), meant);
  strictEqual(writtenEdit(refusedText("u4")), meant);
  strictEqual(writtenEdit("stale append"), "stale append");
});

Deno.test("editChange: none when written or refused plain, else the first difference", () => {
  strictEqual(editChange(editText("a5", 5)), undefined);
  strictEqual(editChange(refusedText("u4")), undefined);
  match(editChange("u4")!, /^u4 \(an embedded NUL\) read back as 2 characters where 14 were/);
  match(editChange("e7")!, /^e7 \(trailing white space\) read back as 2 characters/);
});

Deno.test("writtenOrPlain: plain after a typed refusal, an untyped one thrown", async () => {
  class TextRefusedError extends Error {
    override name = "TextRefusedError";
  }
  const store = (error: Error) => (plain: boolean) => {
    if (!plain) throw error;
    return "plain";
  };
  strictEqual(await writtenOrPlain(store(new TextRefusedError("no"))), "plain");
  strictEqual(await writtenOrPlain(() => Promise.resolve("meant")), "meant");
  await writtenOrPlain(store(new TypeError("no"))).then(
    () => Promise.reject(new Error("an untyped refusal was taken")),
    (error) => strictEqual(error.name, "TypeError"),
  );
});
