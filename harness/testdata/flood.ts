// Floods stderr (several MiB), then exits 1: the parent must not block or keep it all.
const line = new TextEncoder().encode("x".repeat(1023) + "\n");
for (let i = 0; i < 4096; i++) Deno.stderr.writeSync(line);
console.error("the end of the flood");
Deno.exit(1);
