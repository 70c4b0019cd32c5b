// A temporary folder for a test file: removed with what it holds when the test module
// unloads (its tests ended, failed ones too), kept when CELLS_KEEP_EVIDENCE is set, so
// that test runs leave nothing in the temporary folder unless asked to.

const folders: string[] = [];

globalThis.addEventListener("unload", () => {
  if (Deno.env.get("CELLS_KEEP_EVIDENCE")) return;
  for (const folder of folders.splice(0)) {
    try {
      Deno.removeSync(folder, { recursive: true });
    } catch {
      // Removed by its test already.
    }
  }
});

/**
 * Makes a temporary folder that lives until the test module unloads.
 *
 * @param options Where and under which prefix (`Deno.makeTempDirSync`'s).
 * @returns Its path.
 */
export function testFolder(options?: Deno.MakeTempOptions): string {
  return removedAtUnload(Deno.makeTempDirSync(options));
}

/**
 * Removes a folder something else made (a run's kept evidence) when the test module
 * unloads, as {@linkcode testFolder} does its own.
 *
 * @param folder The folder.
 * @returns The same folder.
 */
export function removedAtUnload(folder: string): string {
  folders.push(folder);
  return folder;
}
