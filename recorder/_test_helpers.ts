// What the recorder's tests share: a log record with defaults (the tests on synthetic logs),
// and a run folder with the recorder's environment (the tests that run it).
import type { LogRecord } from "./log.ts";
import { denoCacheDir, recorderEnv, type RecorderOptions } from "./record.ts";
import { testFolder } from "../internal/_test_folder.ts";

/** A counted write record of handle 1, with `fields` over it. */
export function logRecord(seq: number, fields: Partial<LogRecord>): LogRecord {
  return {
    seq,
    kind: "write",
    counted: true,
    failed: false,
    injected: false,
    synchronous: false,
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

/**
 * A run folder with an empty watched `db/`, and the recorder's environment for it: its log
 * `fs.log`, Deno's cache and the folder itself ignored, then `options` (given the folder).
 */
export function recorderFolder(
  library: string,
  options: (run: string) => Partial<RecorderOptions> = () => ({}),
): { run: string; log: string; env: Record<string, string> } {
  const run = testFolder();
  Deno.mkdirSync(`${run}/db`);
  const log = `${run}/fs.log`;
  const env = recorderEnv({
    library,
    watched: `${run}/db`,
    log,
    ignore: [denoCacheDir(), run],
    ...options(run),
  });
  return { run, log, env };
}
