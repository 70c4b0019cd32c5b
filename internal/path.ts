// Path helpers for the modules that crash-test children load. Importing `node:path` or
// `node:url` starts Deno's Node compatibility layer: about 7 ms of CPU in every child,
// a fifth of its start-up, and the cells and the sweep start hundreds of children.
// They follow `node:path`'s `dirname` and `node:url`'s `fileURLToPath` and `pathToFileURL`
// for this platform (`path_test.ts` compares them).

const WINDOWS = Deno.build.os === "windows";

function isSeparator(char: string | undefined): boolean {
  return char === "/" || (WINDOWS && char === "\\");
}

/**
 * The directory part of `path`, as `node:path`'s `dirname`: "." for a bare name, the
 * root for a top-level entry; a run of separators before the last name is kept.
 */
export function dirname(path: string): string {
  if (path === "") return ".";
  // A root: "/" (or "\\"), on Windows also a drive, "C:" or "C:\\".
  let root = isSeparator(path[0]) ? 1 : 0;
  if (WINDOWS && /^[A-Za-z]:/.test(path)) root = isSeparator(path[2]) ? 3 : 2;
  let end = -1;
  let inName = false;
  for (let i = path.length - 1; i >= Math.max(root, 1); i--) {
    if (!isSeparator(path[i])) inName = true;
    else if (inName) {
      end = i;
      break;
    }
  }
  if (end === -1) return root ? path.slice(0, root) : ".";
  if (root === 1 && end === 1 && !WINDOWS) return "//";
  return path.slice(0, end);
}

/** The path of a `file:` URL, percent-decoded; a TypeError for any other URL. */
export function fromFileUrl(url: string | URL): string {
  const parsed = url instanceof URL ? url : new URL(url);
  if (parsed.protocol !== "file:") {
    throw new TypeError(`Cannot use "${parsed.href}" as a path: it is not a file URL`);
  }
  if (/%2f/i.test(parsed.pathname) || (WINDOWS && /%5c/i.test(parsed.pathname))) {
    throw new TypeError(
      `Cannot use "${parsed.href}" as a path: it encodes a path separator`,
    );
  }
  const path = decodeURIComponent(parsed.pathname);
  if (!WINDOWS) {
    if (parsed.hostname !== "" && parsed.hostname !== "localhost") {
      throw new TypeError(`Cannot use "${parsed.href}" as a path: it names a host`);
    }
    return path;
  }
  const local = path.replace(/\//g, "\\");
  if (parsed.hostname !== "") return `\\\\${parsed.hostname}${local}`; // UNC
  return local.replace(/^\\([A-Za-z]:)/, "$1");
}

/**
 * The `file:` URL of an absolute `path`, as `node:url`'s `pathToFileURL`: every character a
 * URL would read otherwise percent-encoded (`%`, `#`, `?`, a space, a tab, a line break), so
 * that a folder named `Store #1` stays one.
 */
export function toFileUrl(path: string): URL {
  const posix = WINDOWS ? `/${path.replace(/\\/g, "/")}` : path;
  if (!posix.startsWith("/") || (WINDOWS && !/^\/[A-Za-z]:\//.test(posix))) {
    throw new TypeError(`Cannot make a file URL of "${path}": the path is not absolute`);
  }
  const url = new URL("file:///");
  // The pathname setter encodes a space, "#" and "?", keeps "%" as an escape's start and
  // drops tabs and line breaks: those are encoded first, with what node encodes besides.
  url.pathname = posix.replace(/[%\\\t\n\r[\]^|]/g, (char) => encodeURIComponent(char));
  return url;
}
