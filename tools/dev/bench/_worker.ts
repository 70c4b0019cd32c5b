// The entry of the bench's Deno children: `deno run -A _worker.ts '<job as JSON>'` runs one
// job (`_jobs.ts`) and prints its result as one JSON line. Each measurement runs in a child
// so that no process opens a database file with two different SQLite copies; the children
// run with -A because Deno 2 wants it for /proc and /dev/shm.
import { DatabaseSync } from "node:sqlite";
import { sqliteLibraryPath, sqliteVersion } from "../../../session_db/sqlite/database.ts";
import { type Job, TMPFS_PREFIX } from "./_jobs.ts";
import { runAppends } from "./_append_worker.ts";
import { runStatements } from "./_statement_worker.ts";
import { cpuModel } from "./_machine.ts";

function runJob(job: Job): unknown {
  switch (job.kind) {
    case "info": {
      if (job.impl === "binding") return { sqlite: sqliteVersion(), library: sqliteLibraryPath() };
      const db = new DatabaseSync(":memory:");
      const row = db.prepare("SELECT sqlite_version() AS v").get() as { v: string };
      db.close();
      return { sqlite: row.v, library: "bundled in deno", cpu: cpuModel() };
    }
    case "tmpfs": {
      if (job.action === "create") {
        try {
          if (!Deno.statSync("/dev/shm").isDirectory) return {};
        } catch {
          return {};
        }
        return { path: Deno.makeTempDirSync({ dir: "/dev/shm", prefix: "session-db-bench-" }) };
      }
      if (job.path?.startsWith(TMPFS_PREFIX)) Deno.removeSync(job.path, { recursive: true });
      return {};
    }
    case "proc": {
      const text = Deno.readTextFileSync(`/proc/${job.pid}/status`);
      const kib = (name: string) =>
        Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1]);
      return { vmHwmKiB: kib("VmHWM"), vmRssKiB: kib("VmRSS") };
    }
    case "stmt":
      return runStatements(job);
    case "append":
      return runAppends(job);
  }
}

if (import.meta.main) {
  console.log(JSON.stringify(runJob(JSON.parse(Deno.args[0] ?? "{}") as Job)));
}
