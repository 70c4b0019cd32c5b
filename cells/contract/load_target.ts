/**
 * Loading a target module: the specifier normalised, the module imported and checked for
 * `openStore`, its store opened in the leg's journal mode, its answers read as the cells
 * read them (`_store_answers.ts`: bigints as numbers, a `null` "none" as `undefined`, an
 * error class of its own by its name, a thrown string as untyped). Re-exported by
 * `target.ts`, beside the contract.
 *
 * @module
 */
import type { Store, TargetModule } from "./store.ts";
import { asStoreError, isPromiseLike, readAnswers } from "./_store_answers.ts";
import { endIfRefused } from "./sandbox_refusal.ts";
import { shownValue } from "./typed.ts";
import { judging, judgingDeadlineMs, judgingWatched } from "../../internal/judging_beacon.ts";
import { envGranted } from "../../internal/env_granted.ts";
import { toFileUrl } from "../../internal/path.ts";

/**
 * Raised when a target module cannot be loaded or lacks `openStore`.
 *
 * @example
 * ```ts
 * import { loadTarget, TargetError } from "./load_target.ts";
 * try {
 *   await loadTarget("data:application/typescript,export const store = 1;");
 * } catch (error) {
 *   console.log(error instanceof TargetError); // true: it does not export openStore
 * }
 * ```
 */
export class TargetError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TargetError";
  }
}

/**
 * Normalises a target specifier: a path becomes a `file:` URL (a relative one read from
 * `base`, by default the working directory); URLs stay.
 *
 * @param target A module specifier, URL or file path.
 * @param base The folder a relative path is read from (default: the working directory).
 * @returns The absolute specifier.
 * @example
 * ```ts
 * import { targetSpecifier } from "./load_target.ts";
 * console.log(targetSpecifier("/srv/my_store/target.ts")); // "file:///srv/my_store/target.ts"
 * console.log(targetSpecifier("target.ts", "/srv/my_store")); // "file:///srv/my_store/target.ts"
 * console.log(targetSpecifier("https://example.com/target.ts")); // unchanged
 * ```
 */
export function targetSpecifier(target: string | URL, base?: string): string {
  if (target instanceof URL) return target.href;
  if (/^(file|https?|data|npm|jsr):/.test(target)) return target;
  if (target.startsWith("/")) return toFileUrl(target).href;
  // The working directory only for a relative path: a store judged in another isolate of
  // this process may have moved it into a folder since removed, where reading it throws.
  return toFileUrl(`${(base ?? Deno.cwd()).replace(/\/$/, "")}/${target}`).href;
}

/**
 * Imports a target module and checks it exports `openStore`.
 *
 * @param target The module.
 * @returns The module.
 * @throws {TargetError} When it cannot be imported or lacks `openStore`.
 * @example
 * ```ts
 * import { loadTarget } from "./load_target.ts";
 * const target = await loadTarget(new URL("../reference_target.ts", import.meta.url));
 * console.log(target.crashPoints?.().length ?? "no crash points");
 * ```
 */
export async function loadTarget(target: string | URL): Promise<TargetModule> {
  const specifier = targetSpecifier(target);
  let module: Record<string, unknown>;
  try {
    module = await import(specifier);
  } catch (error) {
    throw new TargetError(
      `Cannot load target module "${specifier}": ${
        error instanceof Error ? error.message.split("\n")[0] : String(error)
      } (check the path or URL, and --allow-import for remote modules)`,
      { cause: error },
    );
  }
  if (typeof module.openStore !== "function") {
    const inDefault = typeof (module.default as { openStore?: unknown } | undefined)?.openStore ===
      "function";
    throw new TargetError(
      `Invalid target module "${specifier}": it does not export openStore(path, options) (${
        inDefault
          ? "its default export holds one: export it by name, e.g. export const { openStore } = store"
          : "export a function that opens your store"
      })`,
    );
  }
  const loaded = module as unknown as TargetModule;
  const openStore = loaded.openStore;
  const declared = module.crashPoints;
  return {
    ...loaded,
    // Asked only where the cells use them (never in a child, whose sandbox may refuse what
    // the target reads to say them).
    ...(declared === undefined ? {} : {
      crashPoints: () => {
        const points = declaredPoints(specifier, declared);
        return crashPointsSetting() === "none" ? [] : points;
      },
    }),
    openStore: (path, options) => {
      const failure = (error: unknown): Error => {
        endIfRefused("openStore", error);
        return asStoreError(error);
      };
      const opened = () => {
        let store: ReturnType<typeof openStore>;
        try {
          store = openStore(path, options);
          // An open that returned its store needs no deadline, and sets no timer: a
          // process's first timer costs it about 6 ms of CPU (Deno loads its Node timers).
          if (!isPromiseLike(store)) return readAnswers(openedStore(specifier, store), path);
        } catch (error) {
          throw failure(error);
        }
        const pending = store;
        const open = async () => {
          try {
            return readAnswers(openedStore(specifier, await pending), path);
          } catch (error) {
            throw failure(error);
          }
        };
        // A watched process's parent bounds the open (even one that blocks) and names it.
        return judgingWatched() ? open() : openedInTime(open, path);
      };
      return judging(`opening the store on ${path}`, opened, path);
    },
  };
}

/** What `openStore` returned, when it is a store (an object); else a `TargetError` naming it. */
function openedStore(specifier: string, store: unknown): Store {
  if ((typeof store === "object" && store !== null) || typeof store === "function") {
    return store as Store;
  }
  throw new TargetError(
    `Invalid target module "${specifier}": openStore returned ${
      shownValue(store)
    }, not the opened store (return it, or a promise of it)`,
  );
}

/**
 * Whether the cells use the crash points a target declares: `CELLS_CRASH_POINTS`,
 * `declared` (default) or `none`, which judges a store as one written elsewhere, declaring
 * none, is judged: by kill, race and stop series instead (the measure of how hard a cell is
 * to pass without them).
 *
 * @param value The setting (default: `CELLS_CRASH_POINTS`).
 * @returns It.
 * @throws {Error} When it is neither `declared` nor `none`.
 * @example
 * ```ts
 * import { crashPointsSetting } from "./load_target.ts";
 * console.log(crashPointsSetting("none")); // "none"
 * ```
 */
export function crashPointsSetting(value = setting()): "declared" | "none" {
  if (value === undefined || value === "declared" || value === "none") return value ?? "declared";
  throw new Error(`Invalid CELLS_CRASH_POINTS "${value}": use declared or none`);
}

/** `CELLS_CRASH_POINTS`, where this process may read it (a user's tests may not). */
function setting(): string | undefined {
  const variable = "CELLS_CRASH_POINTS";
  return envGranted(variable) ? Deno.env.get(variable) : undefined;
}

/**
 * The crash points a target declares, checked: its `crashPoints()`'s list of names (or the
 * list itself, exported as one); nothing (a `crashPoints` that returns nothing) reads as none.
 */
function declaredPoints(specifier: string, declared: unknown): string[] {
  const invalid = (what: string, cause?: unknown) =>
    new TargetError(
      `Invalid target module "${specifier}": crashPoints ${what}, not a list of the crash point names its store honours (export crashPoints() returning them synchronously, [] for none)`,
      cause === undefined ? undefined : { cause },
    );
  let points: unknown = declared;
  if (typeof declared === "function") {
    try {
      points = declared();
    } catch (error) {
      throw invalid(`threw ${error instanceof Error ? error.message : String(error)}`, error);
    }
    if (points === undefined || points === null) return [];
  }
  if (!Array.isArray(points) || points.some((point) => typeof point !== "string")) {
    const what = isPromiseLike(points) ? "a promise" : shownValue(points);
    throw invalid(typeof declared === "function" ? `returned ${what}` : `is ${what}`);
  }
  return [...points];
}

/**
 * Opens a target's store with the leg's journal mode.
 *
 * @param target The module.
 * @param path The database file.
 * @returns The store.
 * @example
 * ```ts
 * import { openTargetStore } from "./load_target.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * const store = await openTargetStore(target, `${Deno.makeTempDirSync()}/s.db`); // the leg's mode
 * await store.createSession("s1");
 * console.log(await store.getMessages("s1")); // []
 * await store.close();
 * ```
 */
export async function openTargetStore(target: string | URL, path: string): Promise<Store> {
  const module = await loadTarget(target);
  const raw = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  const journalMode = raw === "wal" || raw === "delete" ? raw : undefined;
  return await module.openStore(path, journalMode ? { journalMode } : {});
}

/**
 * The store an open resolves to, or an error once the judging deadline passes: a store
 * that waits without end (for a lock a crashed life left) must not hold its judge for good.
 * One that opens after all is closed. Only an open that returns a promise can be bounded
 * here.
 */
async function openedInTime(open: () => Promise<Store>, path: string): Promise<Store> {
  const opening = open();
  const ms = judgingDeadlineMs();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      opening.then((store) => store.close()).catch(() => {});
      reject(
        new Error(
          `The store did not open "${path}" within ${
            ms / 1000
          } s: a store must open what a crash left`,
        ),
      );
    }, ms);
  });
  try {
    return await Promise.race([opening, late]);
  } finally {
    clearTimeout(timer);
  }
}
