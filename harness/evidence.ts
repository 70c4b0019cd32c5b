import { join } from "node:path";

/**
 * A run's private directory. Removed when the run passes; kept with an
 * `evidence.json` when it fails, and its path printed.
 *
 * @example
 * ```ts
 * import { RunDir } from "./evidence.ts";
 * const run = await RunDir.create("cell1");
 * await run.finish(true, { acknowledged: 0 });
 * ```
 */
export class RunDir {
  /** The directory. */
  readonly path: string;

  private constructor(path: string) {
    this.path = path;
  }

  /**
   * Creates a run directory under one evidence folder: `CELLS_EVIDENCE_DIR` when set,
   * else `.cache/evidence/` in the working directory (the system temp folder when that
   * cannot be written).
   *
   * @param prefix A name prefix, e.g. the cell.
   * @returns The run directory.
   */
  static async create(prefix: string): Promise<RunDir> {
    const root = await evidenceRoot();
    const path = await Deno.makeTempDir({ prefix: `${prefix}-`, ...(root ? { dir: root } : {}) });
    return new RunDir(await Deno.realPath(path));
  }

  /**
   * A file inside the directory.
   *
   * @param name The file name.
   * @returns Its path.
   */
  file(name: string): string {
    return join(this.path, name);
  }

  /**
   * Ends the run: removes the directory on success; on failure writes `evidence.json`
   * and prints where the evidence is.
   *
   * @param passed Whether the run passed.
   * @param evidence Leg, version, counts, kill timing, child stderr.
   * @returns The kept path, or `undefined` when removed.
   */
  async finish(passed: boolean, evidence: Record<string, unknown>): Promise<string | undefined> {
    if (passed && !Deno.env.get("CELLS_KEEP_EVIDENCE")) {
      await Deno.remove(this.path, { recursive: true }).catch(() => {});
      return undefined;
    }
    await Deno.writeTextFile(
      this.file("evidence.json"),
      JSON.stringify({ ...evidence, keptAt: new Date().toISOString() }, null, 2) + "\n",
    );
    if (!passed) console.error(`evidence kept: ${this.path}`);
    return this.path;
  }
}

/** The evidence folder, created; `undefined` for the system temp folder. */
async function evidenceRoot(): Promise<string | undefined> {
  const explicit = Deno.env.get("CELLS_EVIDENCE_DIR");
  if (explicit) {
    await Deno.mkdir(explicit, { recursive: true });
    return explicit;
  }
  try {
    const root = join(Deno.cwd(), ".cache", "evidence");
    await Deno.mkdir(root, { recursive: true });
    return root;
  } catch {
    return undefined; // a read-only working directory: the system temp folder
  }
}
