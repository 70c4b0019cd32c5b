// What a child needs to load a target module: read access to its folder (and the import map
// of its project), or the host it is imported from.
import { dirname, fromFileUrl } from "../internal/path.ts";
import type { SpawnOptions } from "../harness/child.ts";

/**
 * The `deno.json(c)` nearest above a target's folder: its import map is what the
 * target's bare specifiers resolve through, in the children as in the project.
 */
function nearestConfig(dir: string): string | undefined {
  for (let current = dir;; current = dirname(current)) {
    for (const name of ["deno.json", "deno.jsonc"]) {
      const path = `${current}/${name}`;
      try {
        if (Deno.statSync(path).isFile) return path;
      } catch {
        // Missing or unreadable: keep looking further up.
      }
    }
    if (dirname(current) === current) return undefined;
  }
}

/**
 * Read access a child needs for the target module: its folder (and the nearest
 * `deno.json`, whose import map its bare specifiers resolve through) when it is a file,
 * the host it is imported from when it is remote.
 *
 * @example
 * ```ts
 * import { targetAccess } from "./target_access.ts";
 * console.log(targetAccess("https://example.com/store.ts")); // { importHosts: ["example.com"] }
 * ```
 */
export function targetAccess(target: string): Partial<SpawnOptions> {
  const url = new URL(target);
  if (url.protocol === "file:") {
    const dir = dirname(fromFileUrl(url));
    const config = nearestConfig(dir);
    return { read: [dir], ...(config ? { config } : {}) };
  }
  if (url.protocol === "http:" || url.protocol === "https:") return { importHosts: [url.host] };
  return {};
}
