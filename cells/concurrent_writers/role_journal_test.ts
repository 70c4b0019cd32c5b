// Cell 6's read check on journals made by hand: a read must hold every append acknowledged
// (to its session) in an earlier millisecond than it was invoked.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { staleReads, type TimedAppend } from "./role_journal.ts";

const append = (role: string, seq: number, id: number, t1: number): TimedAppend => ({
  role,
  seq,
  session: "long",
  content: `${role}:${seq}`,
  id,
  t0: t1 - 1,
  t1,
});

Deno.test("staleReads: a read holding every earlier acknowledged append is fresh", () => {
  const appends = [append("cli", 0, 1, 10), append("gateway", 0, 2, 12)];
  // Acknowledged in the read's own millisecond or later: either way.
  deepStrictEqual(
    staleReads(appends, [{ role: "cli", session: "long", ids: [1], t0: 12 }]),
    [],
  );
  deepStrictEqual(
    staleReads(appends, [{ role: "cli", session: "long", ids: [1, 2], t0: 13 }]),
    [],
  );
});

Deno.test("staleReads: a read missing an append acknowledged before it is stale", () => {
  const appends = [append("cli", 0, 1, 10), append("gateway", 3, 2, 12)];
  const stale = staleReads(appends, [
    { role: "cli", session: "long", ids: [1], t0: 13 },
    { role: "cli", session: "other", ids: [], t0: 13 },
  ]);
  strictEqual(stale.length, 1);
  ok(stale[0]!.includes("not 1 acknowledged before it, first gateway #3 (id 2"), stale[0]);
});
