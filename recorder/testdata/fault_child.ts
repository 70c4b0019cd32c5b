// A child for fault_itest.ts: runs the steps its arguments name on one file and prints,
// as JSON, each step's outcome: the bytes a write or read returned, 0 for a sync, or the
// error's message (an injected fault's, e.g. "No space left on device (os error 28)").
//   <file> <step>...   steps: w:<text> write, s fsync, d fdatasync, at:<n> seek to n,
//                      r read (from the start, through a second descriptor)
const [path, ...steps] = Deno.args;
const file = Deno.openSync(path!, { create: true, read: true, write: true });
const outcomes: (number | string)[] = [];
for (const step of steps) {
  try {
    if (step.startsWith("w:")) {
      outcomes.push(file.writeSync(new TextEncoder().encode(step.slice(2))));
    } else if (step === "s") outcomes.push((file.syncSync(), 0));
    else if (step === "d") outcomes.push((file.syncDataSync(), 0));
    else if (step.startsWith("at:")) {
      outcomes.push(file.seekSync(Number(step.slice(3)), Deno.SeekMode.Start));
    } else if (step === "r") {
      using reader = Deno.openSync(path!, { read: true });
      outcomes.push(reader.readSync(new Uint8Array(64)) ?? 0);
    } else throw new TypeError(`Unknown step "${step}"`);
  } catch (error) {
    if (error instanceof TypeError) throw error;
    outcomes.push(error instanceof Error ? error.message : String(error));
  }
}
file.close();
console.log(JSON.stringify(outcomes));
