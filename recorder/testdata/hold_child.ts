// A child for hold_test.ts: what the recorder's hold and refusal signals see.
//   write <dir> <marks>                 a mark, a watched write, a mark
//   lock <file> <marks> <lib> <wait 0|1> a mark, a write lock on <file> through the
//                                       recorder's fcntl (F_SETLKW when wait is 1), a mark;
//                                       prints the call's result
//   hold <file> <ready> <lib>           takes a write lock on <file>, creates <ready>, waits
//   flock <file> <marks>                a mark, an exclusive flock on <file> through Deno's
//                                       own lockSync (it waits), a mark; prints "locked"
//   fhold <file> <ready>                takes an exclusive flock on <file>, creates <ready>,
//                                       waits
//   take <mkdir|rename|excl> <path> <marks>
//                                       a mark, a name made only if missing at <path> (a
//                                       folder; a folder holding a file renamed onto it; a
//                                       createNew open), a mark; prints "took", else the
//                                       error's name

const F_SETLK = 6;
const F_SETLKW = 7;
const F_WRLCK = 1;
const O_RDWR_CREAT = 0o102;

/** A `struct flock` (x86-64 glibc) asking for a write lock on the whole file. */
function writeLock(): Uint8Array<ArrayBuffer> {
  const flock = new Uint8Array(32);
  new DataView(flock.buffer).setInt16(0, F_WRLCK, true);
  return flock;
}

function libc(path: string) {
  return Deno.dlopen(path, {
    open: { parameters: ["buffer", "i32", "i32"], result: "i32" },
    fcntl: { parameters: ["i32", "i32", "buffer"], result: "i32" },
  }).symbols;
}

const cString = (s: string) => new TextEncoder().encode(`${s}\0`);
const mark = (marks: string, what: string) =>
  Deno.writeTextFileSync(marks, `{"at":"${what}"}\n`, { append: true });

const [mode, a, b, c, d] = Deno.args;
if (mode === "write") {
  mark(b!, "start");
  Deno.writeTextFileSync(`${a}/a.txt`, "written");
  mark(b!, "end");
} else if (mode === "lock") {
  const { open, fcntl } = libc(c!);
  const fd = open(cString(a!), O_RDWR_CREAT, 0o644);
  mark(b!, "start");
  const result = fcntl(fd, d === "1" ? F_SETLKW : F_SETLK, writeLock());
  mark(b!, "end");
  console.log(result);
} else if (mode === "flock") {
  const file = Deno.openSync(a!, { read: true, write: true, create: true });
  mark(b!, "start");
  file.lockSync(true);
  mark(b!, "end");
  console.log("locked");
} else if (mode === "fhold") {
  Deno.openSync(a!, { read: true, write: true, create: true }).lockSync(true);
  Deno.writeTextFileSync(b!, "held");
  setInterval(() => {}, 1000);
} else if (mode === "take") {
  const [kind, path, marks] = [a!, b!, c!];
  if (kind === "rename") {
    Deno.mkdirSync(`${path}.new`);
    Deno.writeTextFileSync(`${path}.new/pid`, String(Deno.pid));
  }
  mark(marks, "start");
  let said = "took";
  try {
    if (kind === "mkdir") Deno.mkdirSync(path);
    else if (kind === "rename") Deno.renameSync(`${path}.new`, path);
    else Deno.openSync(path, { write: true, createNew: true }).close();
  } catch (error) {
    said = error instanceof Error ? error.name : String(error);
  }
  mark(marks, "end");
  console.log(said);
} else if (mode === "hold") {
  const { open, fcntl } = libc(c!);
  const fd = open(cString(a!), O_RDWR_CREAT, 0o644);
  if (fcntl(fd, F_SETLK, writeLock()) !== 0) throw new Error("hold: the lock was refused");
  Deno.writeTextFileSync(b!, "held");
  setInterval(() => {}, 1000);
}
