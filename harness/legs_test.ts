import { strictEqual, throws } from "node:assert/strict";
import { LegError, parseLeg } from "./legs.ts";

Deno.test("parseLeg accepts the three legs and rejects anything else with the fix", () => {
  strictEqual(parseLeg(undefined), "default");
  strictEqual(parseLeg(""), "default");
  strictEqual(parseLeg("WAL"), "wal");
  strictEqual(parseLeg("delete"), "delete");
  throws(
    () => parseLeg("truncate"),
    (e: unknown) => e instanceof LegError && /use one of default, delete, wal/.test(e.message),
  );
});
