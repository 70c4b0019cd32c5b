import { deepStrictEqual, throws } from "node:assert/strict";
import { readReport, REPORT_MARK } from "./report_line.ts";

Deno.test("readReport: the last marked line, whatever the store printed around it", () => {
  const out = `[store] opening\n${REPORT_MARK}{"n":1}\n[store] x${REPORT_MARK}{"n":2}\nbye\n`;
  deepStrictEqual(readReport(out), { n: 2 });
  deepStrictEqual(readReport(`${REPORT_MARK}{"n":3}`), { n: 3 });
});

Deno.test("readReport: none without a marked line; a torn one throws", () => {
  deepStrictEqual(readReport('{"n":1}\n'), undefined);
  throws(() => readReport(`${REPORT_MARK}{"n":`), SyntaxError);
});
