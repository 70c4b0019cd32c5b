// The contents cell 5's senders record, and how a stored one is read back: as recorded, plain
// after a typed refusal, or changed.
import { deepStrictEqual, match, strictEqual } from "node:assert/strict";
import { contentChange, obligationContent, shownContent, writtenContent } from "./_content.ts";
import { contentsKept, type RecoveredOutbox } from "./state.ts";

Deno.test("obligationContent: the name, then cell 1's text of the turn", () => {
  strictEqual(obligationContent("effect", 0), "effect 0\u0000after a NUL");
  strictEqual(obligationContent("life2 effect", 1), "life2 effect 1 é 漢字 🦕");
  strictEqual(obligationContent("effect", 4), "effect 4");
  strictEqual(obligationContent("effect", 5), "effect 5\u0000after a NUL");
  strictEqual(shownContent(obligationContent("live effect", 3)), "live effect 3");
  strictEqual(shownContent("guard m1"), "guard m1");
});

Deno.test("writtenContent: a stored content names what was recorded, cut, trimmed or plain", () => {
  const full = obligationContent("effect", 5);
  deepStrictEqual(writtenContent(full), { content: full, refused: false });
  deepStrictEqual(writtenContent("effect 5"), { content: full, refused: false });
  deepStrictEqual(writtenContent("effect 5 (text refused)"), { content: full, refused: true });
  deepStrictEqual(writtenContent("effect 15"), {
    content: obligationContent("effect", 15),
    refused: false,
  });
  deepStrictEqual(writtenContent("m3"), { content: "m3", refused: false });
});

Deno.test("contentChange: none when kept or refused plain, else the first difference", () => {
  strictEqual(contentChange(obligationContent("backlog", 3)), undefined);
  strictEqual(contentChange("backlog 3 (text refused)"), undefined);
  match(
    contentChange("effect 5")!,
    /^effect 5 \(an embedded NUL\) read back as 8 characters where 20 were written/,
  );
  match(contentChange("effect 3")!, /^effect 3 \(trailing white space\) read back as 8/);
});

Deno.test("contentsKept: fails on an obligation stored changed, not on one stored plain", () => {
  const outbox = (stored: string): RecoveredOutbox => ({
    obligations: [{
      obligationId: "o5",
      content: obligationContent("effect", 5),
      stored,
      state: "delivered",
      deliveryFence: 1,
      lastError: null,
    }],
    invariants: [],
  });
  deepStrictEqual(contentsKept(outbox("effect 5 (text refused)")).violations, []);
  const changed = contentsKept(outbox("effect 5"));
  strictEqual(changed.pattern, "text-changed");
  match(changed.violations[0]!, /^1 obligation\(s\) changed, first: effect 5 \(an embedded NUL\)/);
});
