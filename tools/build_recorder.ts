/**
 * `deno task recorder`: builds the file-system call recorder (`recorder/fs_recorder.c`)
 * into `.cache/recorder/<hash>/`, or says why this machine cannot use one.
 *
 * @module
 */
import { buildRecorder } from "../recorder/build.ts";
import { parseFlags, type ToolSpec } from "./_cli.ts";

/** The task's command line (its `--help`). */
export const RECORDER_CLI: ToolSpec = {
  usage: "deno task recorder",
  summary: `Builds the LD_PRELOAD file-system call recorder with cc (CC overrides it) into
.cache/recorder/<hash>/libfsrecorder.so, reusing a build of the same source. Prints the
library's path, or SKIP: <reason> where it cannot work (not Linux/glibc, no compiler).`,
  flags: [],
  exitCodes: {
    0: "built, reused, or skipped with the reason",
    1: "the compiler rejected the source",
  },
};

if (import.meta.main) {
  parseFlags(RECORDER_CLI, Deno.args);
  const built = await buildRecorder();
  console.log(built.ok ? built.path : `SKIP: ${built.reason}`);
}
