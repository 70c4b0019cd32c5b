// Cell 6's open window: another process holds the write lock of a new file, made in the
// journal mode the store does not use (`children/open_holder.ts`), while a process of the
// store opens it and writes (`children/opener.ts`). It stands for two processes of the
// store making one file together. SQLite answers a journal-mode switch's busy at once,
// never through the busy handler (the switch upgrades a read transaction), so a store
// that does not wait for it fails there; the roles never meet that, as the file exists in
// the store's mode before they start. The holder lets go once the opener has been opening
// for the window's length, or has ended.
import { ok } from "node:assert/strict";
import { releaseBarrier } from "../../harness/barrier.ts";
import type { Child } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import type { ObservedMode } from "../../harness/legs.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import { openTargetStore } from "../contract/target.ts";
import { BUSY_REFUSAL } from "../contract/typed.ts";
import type { CellRun } from "../engine/cell.ts";
import { OPEN_HOLDER, OPENER } from "./_children.ts";

/** How the opener ended, as it wrote it (or as its exit showed, when it wrote nothing). */
export type OpenerResult =
  | { k: "opened"; id: number; ms: number }
  | { k: "error"; name: string; message: string; ms?: number };

/** What the open window observed. */
export interface OpenWindow {
  /** The journal mode the holder made the file in: the one the store does not use. */
  holderMode: "wal" | "delete";
  /** How long the lock was held after the opener began opening, in ms. */
  heldMs: number;
  /** How the opener ended. */
  result: OpenerResult;
  /** The messages of the opener's session, read back once it ended well. */
  stored: string[];
}

/** The window's files in the run folder, its store in a folder of its own. */
function windowFiles(ctx: CellRun) {
  const file = (name: string) => ctx.run.file(`open-window.${name}`);
  return {
    db: ctx.run.store("open-window"),
    held: file("held"),
    release: file("release"),
    opening: file("opening"),
    result: file("result"),
  };
}

/**
 * Runs the open window: the holder takes a new file's write lock, the opener opens the
 * store on it, and the holder lets go after `windowMs` of opening (or once the opener
 * ended); then what the opener wrote is read back.
 *
 * @param ctx The cell's run.
 * @param storeMode The journal mode the store's own file is in.
 * @param windowMs How long the lock is held once the opener is opening.
 * @returns What happened.
 */
export async function openWindow(
  ctx: CellRun,
  storeMode: ObservedMode,
  windowMs: number,
): Promise<OpenWindow> {
  const files = windowFiles(ctx);
  const holderMode = storeMode === "wal" ? "delete" : "wal";
  const holder = ctx.spawn(OPEN_HOLDER, [files.db, holderMode, files.held, files.release]);
  let opener: Child | undefined;
  try {
    await waitFor(() => exists(files.held), {
      what: "the open window's holder to take the new file's write lock",
      deadlineMs: 30_000,
      children: [holder],
    });
    opener = ctx.spawn(OPENER, [files.db, files.opening, files.result]);
    const running = opener;
    await waitFor(() => exists(files.opening) || running.exited !== undefined, {
      what: "the opener to load the target",
      deadlineMs: 60_000,
    });
    const openingAt = performance.now();
    await waitFor(
      () => running.exited !== undefined || performance.now() - openingAt >= windowMs,
      { what: "the open window to pass", deadlineMs: windowMs + 60_000 },
    );
    releaseBarrier(files.release);
    const heldMs = performance.now() - openingAt;
    await waitFor(() => running.exited !== undefined, {
      what: "the opener to open the store and write",
      deadlineMs: 60_000,
    });
    const held = await holder.status;
    if (!held.success) {
      throw new HarnessError(`The open window's holder failed: ${holder.describe()}`);
    }
    const result = readResult(files.result, running);
    const stored = result.k === "opened" ? await readBack(ctx.target, files.db) : [];
    return { holderMode, heldMs, result, stored };
  } finally {
    releaseBarrier(files.release);
    for (const child of [holder, opener]) {
      if (child && child.exited === undefined) child.signal("SIGKILL");
    }
  }
}

function readResult(path: string, opener: Child): OpenerResult {
  if (exists(path)) return JSON.parse(Deno.readTextFileSync(path)) as OpenerResult;
  return { k: "error", name: "exit", message: opener.describe() };
}

async function readBack(target: string, db: string): Promise<string[]> {
  const store = await openTargetStore(target, db);
  try {
    return (await store.getMessages("opened")).map((m) => String(m.content));
  } finally {
    await store.close();
  }
}

/**
 * The window's step: the opener opened the held file and its acknowledged message is
 * there, or it refused with a typed busy error after trying at least `minWaitMs`.
 *
 * @param t The test context.
 * @param window What the window observed.
 * @param minWaitMs How long a typed busy refusal must have tried.
 */
export async function checkOpenWindow(
  t: Deno.TestContext,
  window: OpenWindow,
  minWaitMs: number,
): Promise<void> {
  const { result, holderMode } = window;
  await t.step("a process opens a new file while another holds its write lock", () => {
    if (result.k === "opened") {
      ok(
        window.stored.length === 1 && window.stored[0] === "opened",
        `the opener's acknowledged message (id ${result.id}) reads back as ${
          JSON.stringify(window.stored)
        }`,
      );
      return;
    }
    const typedLate = result.name === BUSY_REFUSAL && (result.ms ?? 0) >= minWaitMs;
    ok(
      typedLate,
      `the store failed to open a new file another process held in ${holderMode} mode${
        result.ms === undefined ? "" : ` (after ${Math.round(result.ms)} ms)`
      }: ${result.name}: ${result.message} (SQLite answers a journal-mode switch's busy at once, without the busy handler: the store must wait and retry it)`,
    );
  });
}
