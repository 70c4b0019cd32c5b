// What the recorder's tests on synthetic logs share: a log record with defaults.
import type { LogRecord } from "./log.ts";

/** A counted write record of handle 1, with `fields` over it. */
export function logRecord(seq: number, fields: Partial<LogRecord>): LogRecord {
  return {
    seq,
    kind: "write",
    counted: true,
    failed: false,
    injected: false,
    handle: 1,
    path: "",
    path2: "",
    a: 0,
    b: 0,
    extra: 0,
    data: new Uint8Array(0),
    ...fields,
  };
}
