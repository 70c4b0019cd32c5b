// Preloaded (`deno run --preload`) into the power-loss tier's children: installs the
// recording VFS as the process's default VFS before the child script runs, so that every
// connection the target opens is recorded, without the child scripts knowing about it.
import { installRecordingVfsFromEnv } from "../session_db/recording_vfs.ts";

if (!installRecordingVfsFromEnv()) {
  console.error(
    "power-loss preload: SESSION_DB_VFS_LOG is not set (set it to the log file the recording VFS appends to)",
  );
  Deno.exit(2);
}
