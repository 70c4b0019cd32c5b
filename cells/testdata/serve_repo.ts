// Serves a folder read-only over HTTP on 127.0.0.1 for the import-by-URL test:
// `deno run --allow-net=127.0.0.1 --allow-read=<root> serve_repo.ts <root> [port]`.
// Listens on `port` (default 0: an ephemeral one) and prints `listening <port>` as its
// first stdout line. Only module and data files are served; dot folders (.git, .cache)
// and paths outside the root are 404.
import { extname, resolve, sep } from "node:path";

const TYPES: Record<string, string> = {
  ".ts": "application/typescript; charset=utf-8",
  ".mts": "application/typescript; charset=utf-8",
  ".js": "application/javascript; charset=utf-8",
  ".mjs": "application/javascript; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  // The recorder's C source, fetched by the suite to build it.
  ".c": "text/plain; charset=utf-8",
};

const [rootArg, portArg = "0"] = Deno.args;
const port = Number(portArg);
if (!rootArg || !Number.isInteger(port) || port < 0 || port > 65535) {
  console.error("usage: serve_repo.ts <root> [port]");
  Deno.exit(2);
}
const root = resolve(rootArg);

function notFound(): Response {
  return new Response("not found\n", { status: 404 });
}

/** Maps a request path to a file under the root, or `undefined` when it may not be served. */
function fileFor(pathname: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0")) return undefined;
  const segments = decoded.split("/").filter((s) => s !== "");
  // No dot segments at all: that refuses `..` and hidden folders in one rule.
  if (segments.some((s) => s.startsWith("."))) return undefined;
  const path = resolve(root, ...segments);
  if (!path.startsWith(root + sep)) return undefined;
  return TYPES[extname(path)] ? path : undefined;
}

Deno.serve({
  hostname: "127.0.0.1",
  port,
  onListen({ port }) {
    console.log(`listening ${port}`);
  },
}, async (request) => {
  if (request.method !== "GET" && request.method !== "HEAD") {
    return new Response("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
  }
  const path = fileFor(new URL(request.url).pathname);
  if (!path) return notFound();
  let body: Uint8Array<ArrayBuffer>;
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return notFound();
    body = await Deno.readFile(path);
  } catch {
    return notFound();
  }
  console.error(`${request.method} ${new URL(request.url).pathname}`);
  return new Response(request.method === "HEAD" ? null : body, {
    headers: { "content-type": TYPES[extname(path)]!, "cache-control": "no-store" },
  });
});
