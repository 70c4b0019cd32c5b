// The programs the tree tests' children start (`setsid`, `sleep`), by absolute path: a
// child's `--allow-run` takes paths, and these live in /usr/bin or /bin by distribution.

/** `name`'s absolute path on PATH, or `/usr/bin/<name>`. */
function onPath(name: string): string {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      if (dir.startsWith("/") && Deno.statSync(`${dir}/${name}`).isFile) return `${dir}/${name}`;
    } catch {
      // Not in this folder.
    }
  }
  return `/usr/bin/${name}`;
}

/** What `tree_root.ts` runs. */
export const TREE_PROGRAMS: readonly string[] = [onPath("setsid"), onPath("sleep")];
