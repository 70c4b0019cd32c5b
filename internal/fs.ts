// File-system helpers shared by every layer (the store, the harness, the cells, the tools).

/**
 * Whether `path` names an existing file or folder. A missing path is `false`; any other
 * error (e.g. a permission denied) is thrown, so a check never passes for the wrong reason.
 */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/**
 * Writes `text` to `path` whole: to a temporary file beside it, then renamed there, so
 * that a reader polling for `path` never sees it half-written.
 */
export function writeWhole(path: string, text: string): void {
  Deno.writeTextFileSync(`${path}.tmp`, text);
  Deno.renameSync(`${path}.tmp`, path);
}

/**
 * The first `length` bytes of a file (fewer when it is shorter), or `undefined` when it is
 * missing; any other error is thrown.
 */
export function readPrefix(path: string, length: number): Uint8Array | undefined {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  try {
    const buffer = new Uint8Array(length);
    let filled = 0;
    while (filled < length) {
      const n = file.readSync(buffer.subarray(filled));
      if (!n) break;
      filled += n;
    }
    return buffer.subarray(0, filled);
  } finally {
    file.close();
  }
}
