// Writes its ready file, then waits to be killed (bounded: exits 3 after 30 s).
Deno.writeTextFileSync(`${Deno.cwd()}/ready`, String(Deno.pid));
setTimeout(() => Deno.exit(3), 30_000);
