// Child for the recording VFS tests: installs the recording VFS (log `<dir>/vfs.log`),
// opens `<dir>/db/s.db` through it, appends `<count>` messages, then closes the store
// (`close`) or SIGKILLs itself right after the last acknowledged append (`kill`).
// `named` registers the VFS without making it the default and opens with `vfs`.
//
// Usage: deno run --allow-ffi … recorded_workload.ts <dir> <count> <close|kill> [named]
import { installRecordingVfs } from "../recording_vfs.ts";
import { SessionDB } from "../session_db.ts";
import { killSelf } from "../process.ts";

const [dir, countText, end, named] = Deno.args;
if (!dir || !countText || (end !== "close" && end !== "kill")) {
  console.error("usage: recorded_workload.ts <dir> <count> <close|kill> [named]");
  Deno.exit(2);
}
try {
  const vfs = installRecordingVfs({ log: `${dir}/vfs.log`, makeDefault: named !== "named" });
  Deno.mkdirSync(`${dir}/db`, { recursive: true });
  const db = SessionDB.open(`${dir}/db/s.db`, named === "named" ? { vfs: vfs.name } : {});
  db.createSession("s");
  for (let i = 0; i < Number(countText); i++) {
    const id = db.appendMessage("s", { role: "user", content: `m${i}` });
    console.log(JSON.stringify({ i, id, mode: db.journalMode }));
  }
  if (end === "kill") killSelf();
  db.close();
} catch (error) {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  Deno.exit(1);
}
