/**
 * Builds the file-system call recorder (`fs_recorder.c`) into
 * `.cache/recorder/<hash>/libfsrecorder.so`, where the hash covers the source and the
 * compiler flags, so a changed source builds anew and an unchanged one is reused.
 *
 * `deno task recorder` (`tools/build_recorder.ts`) runs it; the last line printed is the
 * library's path, or `SKIP: <reason>` (exit 0) where the recorder cannot work (not
 * Linux/glibc, no `cc`).
 *
 * @example
 * ```ts
 * import { buildRecorder } from "./build.ts";
 * const built = await buildRecorder();
 * console.log(built.ok ? built.path : `SKIP: ${built.reason}`);
 * ```
 *
 * @module
 */
import { exists } from "../internal/fs.ts";
import { fromFileUrl } from "../internal/path.ts";

const SOURCE = new URL("./fs_recorder.c", import.meta.url);
/** Included by the source (one translation unit in several files), by file name. */
const PARTS = [
  "fs_recorder_hazard.c",
  "fs_recorder_fd.c",
  "fs_recorder_fault.c",
  "fs_recorder_io.c",
];
const FLAGS = ["-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror"];
const LIBS = ["-ldl", "-lpthread"];

/**
 * The outcome of {@linkcode buildRecorder}: the library, or why this machine cannot use
 * one.
 *
 * @example
 * ```ts
 * import type { RecorderBuild } from "./build.ts";
 * function describe(built: RecorderBuild): string {
 *   return built.ok ? built.path : `SKIP: ${built.reason}`;
 * }
 * ```
 */
export type RecorderBuild = { ok: true; path: string } | { ok: false; reason: string };

/**
 * Raised when the compiler rejects the source (a defect, not a missing capability).
 *
 * @example
 * ```ts
 * import { RecorderBuildError } from "./build.ts";
 * console.log(new RecorderBuildError("x").name); // RecorderBuildError
 * ```
 */
export class RecorderBuildError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RecorderBuildError";
  }
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Where the library is cached: the project's `.cache/` when this module is on disk; the
 * user's cache folder when it was imported by URL (there is no project folder then).
 */
function cacheRoot(): string {
  const here = new URL("..", import.meta.url);
  if (here.protocol === "file:") return fromFileUrl(here).replace(/\/$/, "");
  const home = Deno.env.get("HOME");
  const base = Deno.env.get("XDG_CACHE_HOME") ?? (home ? `${home}/.cache` : undefined);
  if (!base) {
    throw new Error(
      "Cannot place the file-system call recorder: neither XDG_CACHE_HOME nor HOME is set (set one)",
    );
  }
  return `${base}/session-cells`;
}

/** A source file's text, read from disk or, for a module imported by URL, fetched. */
async function sourceText(url: URL): Promise<string | { reason: string }> {
  if (url.protocol === "file:") return await Deno.readTextFile(url);
  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      return {
        reason: `the recorder's C source ${url.href} was imported by URL and fetching it ` +
          `needs --allow-net=${url.host}`,
      };
    }
    return { reason: `cannot fetch the recorder's C source ${url.href}: ${error}` };
  }
  if (!response.ok) {
    await response.body?.cancel();
    return { reason: `cannot fetch the recorder's C source ${url.href}: HTTP ${response.status}` };
  }
  return await response.text();
}

/**
 * Why the recorder cannot run here, or `undefined` when the platform fits (Linux with
 * glibc: the recorder interposes glibc's symbols, and Deno must be glibc-linked for
 * `LD_PRELOAD` to reach its calls).
 *
 * @returns The reason, or `undefined`.
 * @example
 * ```ts
 * import { platformSkipReason } from "./build.ts";
 * console.log(platformSkipReason() ?? "the recorder can run here");
 * ```
 */
export function platformSkipReason(): string | undefined {
  if (Deno.build.os !== "linux") {
    return `the file-system call recorder needs Linux (LD_PRELOAD of glibc symbols), this is ${Deno.build.os}`;
  }
  const env = (Deno.build as { env?: string }).env;
  if (env !== undefined && env !== "gnu") {
    return `the file-system call recorder needs a glibc-linked Deno, this one is built for ${env}`;
  }
  return undefined;
}

/**
 * Builds (or reuses) the recorder library.
 *
 * @param options `cc`: the compiler (default `$CC`, else `cc`); `root`: the project root
 * whose `.cache/` receives the library.
 * @returns The library's path, or the reason it cannot be built here.
 * @throws {RecorderBuildError} When the compiler runs but rejects the source.
 * @example
 * ```ts
 * import { buildRecorder } from "./build.ts";
 * const built = await buildRecorder();
 * if (built.ok) console.log(`LD_PRELOAD=${built.path}`);
 * ```
 */
export async function buildRecorder(
  options: { cc?: string; root?: string } = {},
): Promise<RecorderBuild> {
  const skip = platformSkipReason();
  if (skip) return { ok: false, reason: skip };
  const cc = options.cc ?? Deno.env.get("CC") ?? "cc";
  const parts = [await sourceText(SOURCE)];
  for (const name of PARTS) parts.push(await sourceText(new URL(`./${name}`, import.meta.url)));
  for (const part of parts) if (typeof part !== "string") return { ok: false, reason: part.reason };
  const [main, ...included] = parts as string[];
  const source = [main, ...included].join("\0");
  const hash = (await sha256(new TextEncoder().encode(
    `${cc}\0${FLAGS.join(" ")}\0${LIBS.join(" ")}\0${source}`,
  ))).slice(0, 16);
  const dir = `${options.root ?? cacheRoot()}/.cache/recorder/${hash}`;
  const path = `${dir}/libfsrecorder.so`;
  if (exists(path)) return await preloadable(path, hash);
  await Deno.mkdir(dir, { recursive: true });
  const partial = `${path}.${Deno.pid}.tmp`;
  let copies: string | undefined;
  let compiled = SOURCE.protocol === "file:" ? fromFileUrl(SOURCE) : undefined;
  if (!compiled) {
    // Imported by URL: the compiler reads the fetched copies (the include is relative).
    // A folder per process: a concurrent build never reads a half-written copy.
    copies = `${dir}/src-${Deno.pid}`;
    await Deno.mkdir(copies, { recursive: true });
    for (const [i, name] of PARTS.entries()) {
      await Deno.writeTextFile(`${copies}/${name}`, included[i]!);
    }
    compiled = `${copies}/fs_recorder.c`;
    await Deno.writeTextFile(compiled, main!);
  }
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command(cc, {
      args: [...FLAGS, "-o", partial, compiled, ...LIBS],
      stdout: "piped",
      stderr: "piped",
    }).output();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return { ok: false, reason: `no C compiler "${cc}" on PATH (install cc or set CC)` };
    }
    throw error;
  }
  if (!output.success) {
    throw new RecorderBuildError(
      `Cannot build the file-system call recorder with ${cc}: ${
        new TextDecoder().decode(output.stderr).trim().split("\n").slice(0, 8).join("\n")
      }`,
    );
  }
  if (copies) await Deno.remove(copies, { recursive: true });
  // Rename into place so a concurrent build never loads a half-written library.
  await Deno.rename(partial, path);
  return await preloadable(path, hash);
}

/** The characters at which the dynamic loader splits `LD_PRELOAD`'s list. */
const PRELOAD_SEPARATORS = /[ :\t\n]/;

/**
 * `path`, or a copy of it that `LD_PRELOAD` can name: the loader splits its list at spaces
 * and colons, so a library under a project path holding one would never load, and every
 * series would silently run unrecorded. The copy goes to the temporary folder, named by
 * the build's hash (its content), renamed into place whole.
 */
async function preloadable(path: string, hash: string): Promise<RecorderBuild> {
  if (!PRELOAD_SEPARATORS.test(path)) return { ok: true, path };
  const tmp = Deno.env.get("TMPDIR") || "/tmp";
  const copy = `${tmp.replace(/\/$/, "")}/session-cells-recorder-${hash}.so`;
  if (PRELOAD_SEPARATORS.test(copy)) {
    return {
      ok: false,
      reason:
        `the recorder "${path}" cannot be preloaded: LD_PRELOAD splits paths at spaces and colons, and the temporary folder "${tmp}" holds one too (move the project, or set TMPDIR to a folder without them)`,
    };
  }
  if (exists(copy)) return { ok: true, path: copy };
  const partial = `${copy}.${Deno.pid}.tmp`;
  await Deno.copyFile(path, partial);
  await Deno.rename(partial, copy);
  return { ok: true, path: copy };
}
