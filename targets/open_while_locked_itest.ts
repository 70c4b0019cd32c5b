// Every SQLite store here opens while another process holds the file's write lock.
// SQLite answers a journal-mode switch's busy at once instead of calling the busy handler
// (the switch upgrades a read transaction, where waiting could deadlock two connections),
// so a store that does not wait for it fails when two processes open one file together:
// a correct store failing a cell for its own adapter's reason is a wrong verdict.
import { deepStrictEqual, ok } from "node:assert/strict";
import { waitFor } from "../harness/wait_for.ts";
import type { Store, StoreOptions } from "../cells/contract/target.ts";
import { childPermissions as pythonPermissions } from "./python_sqlite3/target.ts";
import { exists } from "../internal/fs.ts";
import { fromFileUrl } from "../internal/path.ts";
import { testFolder } from "../internal/_test_folder.ts";

const python = pythonPermissions().run?.[0] ?? "";
const HOLDER = fromFileUrl(new URL("./testdata/hold_write_lock.py", import.meta.url));
/** How long the holder keeps the lock: the window in which a store's first try lands. */
const HOLD_MS = 1000;

// libSQL loads its npm package only in a child without the frozen lockfile, so it is not
// opened here.
const TARGETS: Record<string, URL> = {
  "the reference store": new URL("../cells/reference_target.ts", import.meta.url),
  "the alternative store": new URL("../cells/testdata/alt_store/target.ts", import.meta.url),
  "node:sqlite": new URL("./node_sqlite.ts", import.meta.url),
  "the Python worker": new URL("./python_sqlite3/target.ts", import.meta.url),
};

/** The switch each order makes: from the holder's mode to the store's. */
const ORDERS: { from: "wal" | "delete"; to: "wal" | "delete" }[] = [
  { from: "delete", to: "wal" },
  { from: "wal", to: "delete" },
];

async function openWhileHeld(target: URL, order: (typeof ORDERS)[number]): Promise<void> {
  // Loaded first: the store's first try must land while the lock is held.
  const { openStore } = await import(target.href) as {
    openStore(path: string, options: StoreOptions): Store | Promise<Store>;
  };
  const dir = testFolder({ prefix: "open-while-locked-" });
  const path = `${dir}/store.db`;
  const ready = `${dir}/held`;
  const holder = new Deno.Command(python, {
    args: [HOLDER, path, order.from, ready, String(HOLD_MS)],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  let holderExited = false;
  const holderOutput = (async () => {
    const chunks = await new Response(holder.stderr).text();
    const status = await holder.status;
    holderExited = true;
    return { status, stderr: chunks.trim() };
  })();
  try {
    await waitFor(() => exists(ready) || holderExited, {
      what: "the holder to take the write lock",
      deadlineMs: 30_000,
    });
    if (holderExited) throw new Error(`The holder exited first: ${(await holderOutput).stderr}`);
    const store = await openStore(path, { journalMode: order.to });
    try {
      await store.createSession("s1");
      await store.appendMessage("s1", { role: "user", content: "after the lock" });
      deepStrictEqual((await store.getMessages("s1")).map((m) => m.content), ["after the lock"]);
    } finally {
      await store.close();
    }
    const held = await holderOutput;
    ok(held.status.success, `the holder failed: ${held.stderr}`);
  } finally {
    if (!holderExited) holder.kill("SIGKILL");
    await holderOutput;
    await Deno.remove(dir, { recursive: true });
  }
}

for (const [name, target] of Object.entries(TARGETS)) {
  for (const order of ORDERS) {
    Deno.test({
      name: `${name} opens in ${order.to} while another process writes a ${order.from} file`,
      ignore: !python.startsWith("/"),
      sanitizeResources: false,
      sanitizeOps: false,
      fn: () => openWhileHeld(target, order),
    });
  }
}
