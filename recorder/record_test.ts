// recorderEnv's fault options: the FSREC_FAIL_* variables they set, none when unset, and
// the refusals of a fault that cannot be injected as asked.
import { deepStrictEqual, throws } from "node:assert/strict";
import { recorderEnv, type RecorderOptions } from "./record.ts";

const base: RecorderOptions = { library: "lib.so", watched: "/tmp/db", log: "/tmp/fs.log" };
const faultVars = (env: Record<string, string>) =>
  Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith("FSREC_FAIL_")));

Deno.test("recorderEnv: no fault variables unless failAt is given", () => {
  deepStrictEqual(faultVars(recorderEnv({ ...base, crashAt: 2 })), {});
});

Deno.test("recorderEnv: a fault's variables, defaults and an endless count", () => {
  deepStrictEqual(faultVars(recorderEnv({ ...base, failAt: 3, failKind: "sync" })), {
    FSREC_FAIL_AT: "3",
    FSREC_FAIL_KIND: "sync",
    FSREC_FAIL_ERRNO: "EIO",
    FSREC_FAIL_COUNT: "1",
    FSREC_FAIL_SHORT: "0",
  });
  const full = recorderEnv({
    ...base,
    failAt: 1,
    failKind: "write",
    failErrno: "ENOSPC",
    failCount: Infinity,
    failShort: true,
    failFile: "-wal",
  });
  deepStrictEqual(faultVars(full), {
    FSREC_FAIL_AT: "1",
    FSREC_FAIL_KIND: "write",
    FSREC_FAIL_ERRNO: "ENOSPC",
    FSREC_FAIL_COUNT: "0",
    FSREC_FAIL_SHORT: "1",
    FSREC_FAIL_FILE: "-wal",
  });
});

Deno.test("recorderEnv: a fault that cannot be injected as asked is refused", () => {
  const bad: [Partial<RecorderOptions>, RegExp][] = [
    [{ failKind: "write" }, /need failAt/],
    [{ failAt: 0, failKind: "write" }, /Invalid failAt 0/],
    [{ failAt: 1 }, /Invalid failKind "undefined"/],
    [{ failAt: 1, failKind: "rename" as never }, /Invalid failKind "rename"/],
    [{ failAt: 1, failKind: "write", failErrno: "EPERM" as never }, /Invalid failErrno/],
    [{ failAt: 1, failKind: "write", failCount: 0 }, /Invalid failCount 0/],
    [{ failAt: 1, failKind: "sync", failShort: true }, /failShort applies to writes/],
  ];
  for (const [options, message] of bad) {
    throws(() => recorderEnv({ ...base, ...options }), message);
  }
});

Deno.test("recorderEnv: ignored folders one a line, colons kept, a newline refused", () => {
  const env = recorderEnv({ ...base, ignore: ["/a:b", "/c"] });
  deepStrictEqual(env.FSREC_IGNORE, "/a:b\n/c");
  throws(() => recorderEnv({ ...base, ignore: ["/a\nb"] }), /cannot hold a newline/);
});
