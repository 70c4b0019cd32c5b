// A child for recorder_test.ts: makes the file-system calls its arguments name.
//   write <dir> <outside>  a watched write+fsync, an unwatched write, a rename, an unlink,
//                          an open with O_CREAT of a file that exists

const [mode, dir, outside] = Deno.args;
if (mode === "write") {
  const file = Deno.openSync(`${dir}/a.txt`, { create: true, write: true, truncate: true });
  file.writeSync(new TextEncoder().encode("watched"));
  file.syncSync();
  file.close();
  Deno.writeTextFileSync(outside!, "unwatched");
  Deno.renameSync(`${dir}/a.txt`, `${dir}/b.txt`);
  Deno.writeTextFileSync(`${dir}/c.txt`, "gone");
  Deno.removeSync(`${dir}/c.txt`);
  const folder = Deno.openSync(dir!, { read: true });
  folder.syncSync();
  folder.close();
  // O_CREAT on a file that is there makes no name.
  Deno.openSync(`${dir}/b.txt`, { create: true, write: true }).close();
}
//   symlink <dir>          a symbolic link into the watched folder (a call not modelled)
if (mode === "symlink") {
  Deno.writeTextFileSync(`${dir}/target.txt`, "x");
  Deno.symlinkSync(`${dir}/target.txt`, `${dir}/link.txt`);
}
//   copy <dir> <outside>   a file copied into the watched folder (copy_file_range, not modelled)
if (mode === "copy") {
  Deno.writeTextFileSync(outside!, "copied");
  Deno.copyFileSync(outside!, `${dir}/copy.txt`);
}
//   move-in <dir> <outside>  a file written outside, renamed into the watched folder
if (mode === "move-in") {
  Deno.writeTextFileSync(outside!, "moved");
  Deno.renameSync(outside!, `${dir}/moved.txt`);
}
