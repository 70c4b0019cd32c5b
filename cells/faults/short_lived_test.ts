import { strictEqual } from "node:assert/strict";
import { type Line, shutOut, starvedWriter } from "./short_lived.ts";

const refused: Line = { k: "refused", seq: 0, name: "BusyDeadlineError" };
const acked: Line = { k: "ack", seq: 0, id: 1 };

Deno.test("starvedWriter: a long-lived writer whose every append was refused starved", () => {
  const reason = starvedWriter([
    { label: "long-1", lines: [{ k: "inv", seq: 0 }, acked] },
    { label: "long-2", lines: [{ k: "inv", seq: 0 }, refused, { k: "inv", seq: 1 }, refused] },
  ]);
  strictEqual(
    reason?.startsWith("long-2 had no append acknowledged in 45000 ms") &&
      reason.includes("refused all 2 it made"),
    true,
    reason,
  );
});

Deno.test("starvedWriter: none when each had one acknowledged, or nothing was refused", () => {
  strictEqual(starvedWriter([{ label: "a", lines: [refused, acked] }]), undefined);
  strictEqual(starvedWriter([{ label: "a", lines: [{ k: "inv", seq: 0 }] }]), undefined);
  strictEqual(starvedWriter([]), undefined);
});

Deno.test("shutOut: a long-lived writer still opening while the other appended was shut out", () => {
  const opened: Line = { k: "open" };
  const reason = shutOut([
    { label: "long-0", lines: [opened, { k: "inv", seq: 0 }, acked] },
    { label: "long-1", lines: [] },
  ]);
  strictEqual(
    reason?.startsWith("long-1 never returned from opening the store in 45000 ms while long-0"),
    true,
    reason,
  );
  // Neither got going, or both opened: the wait is the suite's, or another verdict's.
  strictEqual(shutOut([{ label: "a", lines: [] }, { label: "b", lines: [] }]), undefined);
  strictEqual(
    shutOut([{ label: "a", lines: [opened, acked] }, { label: "b", lines: [opened] }]),
    undefined,
  );
});
