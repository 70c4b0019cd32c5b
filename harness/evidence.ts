import { basename, dirname, join } from "node:path";
import { HarnessError } from "./harness_error.ts";

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
   * A store's path in a folder of its own inside the directory (`<name>/store.db`, the
   * folder created). A store may keep files beside its path under names of its own, so no
   * two stores share a folder, and the run's own files (journals, barriers) stay out of it.
   *
   * @param name The folder's name, e.g. the scenario.
   * @returns The store's path.
   */
  store(name: string): string {
    const folder = join(this.path, name);
    Deno.mkdirSync(folder, { recursive: true });
    return join(folder, "store.db");
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

/**
 * A run's file about the store at `db` (made by {@linkcode RunDir.store}), kept beside
 * the store's folder, not in it: `<run>/<folder>.<name>`.
 *
 * @param db The store's path.
 * @param name The file's name.
 * @returns Its path.
 * @example
 * ```ts
 * import { besideStore } from "./evidence.ts";
 * console.log(besideStore("/run/a/store.db", "acks.jsonl")); // "/run/a.acks.jsonl"
 * ```
 */
export function besideStore(db: string, name: string): string {
  return besideFolder(dirname(db), name);
}

/**
 * A run's file about a store's folder, kept beside it, not in it: `<folder>.<name>`.
 *
 * @param folder The store's folder.
 * @param name The file's name.
 * @returns Its path.
 * @example
 * ```ts
 * import { besideFolder } from "./evidence.ts";
 * console.log(besideFolder("/run/a", "fs.log")); // "/run/a.fs.log"
 * ```
 */
export function besideFolder(folder: string, name: string): string {
  return join(dirname(folder), `${basename(folder)}.${name}`);
}

/**
 * The folder run folders are made in, created: `CELLS_EVIDENCE_DIR`, else `.cache/evidence`
 * in the working directory, else (that one read-only) `undefined` for the system temp folder.
 *
 * @returns The folder.
 * @throws {HarnessError} When `CELLS_EVIDENCE_DIR` names a folder that cannot be created.
 * @example
 * ```ts
 * import { evidenceRoot } from "./evidence.ts";
 * console.log(await evidenceRoot()); // e.g. "/srv/project/.cache/evidence"
 * ```
 */
export async function evidenceRoot(): Promise<string | undefined> {
  const explicit = Deno.env.get("CELLS_EVIDENCE_DIR");
  if (explicit) {
    try {
      await Deno.mkdir(explicit, { recursive: true });
    } catch (error) {
      throw new HarnessError(
        `Cannot create the evidence folder "${explicit}" (CELLS_EVIDENCE_DIR): ${
          (error as Error).message
        }: name a folder this user can write`,
        { cause: error },
      );
    }
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
