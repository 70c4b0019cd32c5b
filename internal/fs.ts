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

/** Whether `path` is a folder (following links); `false` when it is missing. */
export function isFolder(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return false;
    }
    throw error;
  }
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

/**
 * Copies a file, or a folder with everything in it, to `to` (parents created). A store may
 * keep its data in a folder at its path (a LevelDB-like layout) or in files beside it.
 */
export function copyTree(from: string, to: string): void {
  const slash = to.lastIndexOf("/");
  if (slash > 0) Deno.mkdirSync(to.slice(0, slash), { recursive: true });
  if (!isFolder(from)) {
    Deno.copyFileSync(from, to);
    return;
  }
  Deno.mkdirSync(to, { recursive: true });
  for (const entry of Deno.readDirSync(from)) {
    if (entry.isFile || entry.isDirectory) copyTree(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}

/** The files under `dir` (in its folders too), each named relative to it. */
export function filesIn(dir: string): string[] {
  const files: string[] = [];
  const walk = (prefix: string): void => {
    for (const entry of Deno.readDirSync(prefix ? `${dir}/${prefix}` : dir)) {
      const name = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory) walk(name);
      else if (entry.isFile) files.push(name);
    }
  };
  walk("");
  return files;
}

/** {@linkcode filesIn}, each with its size, largest first. */
export function filesUnder(dir: string): { name: string; size: number }[] {
  return filesIn(dir)
    .map((name) => ({ name, size: Deno.statSync(`${dir}/${name}`).size }))
    .sort((a, b) => b.size - a.size || a.name.localeCompare(b.name));
}
