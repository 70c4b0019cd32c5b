// Cell 5's judges on hand-made evidence (no processes): the claims of one boot's sweeps,
// the recovery marker a reader must see, and the store's folder before and after a boot.
import { deepStrictEqual, match } from "node:assert/strict";
import { claimsCheck } from "./judge.ts";
import { judgeOutbox, markerShows } from "./state.ts";
import { fileEntry, folderChanges, snapshotStoreFolder } from "./store_folder.ts";
import type { Arrival } from "./inbox.ts";

const CONTENT: Record<string, string> = { a: "effect 0", b: "effect 1", c: "backlog 0" };
const contentOf = (id: string) => CONTENT[id];
const send = (id: string) => ({ id, action: "send" });

/** Runs `use` on a fresh store file holding `pages` in a folder of its own, removed after. */
function withStoreFolder(use: (dir: string, db: string) => void): void {
  const dir = Deno.makeTempDirSync();
  try {
    const db = `${dir}/store.db`;
    Deno.writeTextFileSync(db, "pages");
    use(dir, db);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("claimsCheck: one sweep taking the whole owed set beside empty ones passes", () => {
  const check = claimsCheck("claims", [
    { name: "r0", claims: [] },
    { name: "r1", claims: ["a", "b", "c"].map(send) },
    { name: "r2", claims: [] },
  ], { owed: ["effect 0", "effect 1", "backlog 0"], contentOf });
  deepStrictEqual(check.violations, []);
});

Deno.test("claimsCheck: a boot's owed set spread over sweeps is one sweep leaving it behind", () => {
  // Disjoint and together exactly the owed set, as three sweeps capped at one each make it.
  const check = claimsCheck("claims", [
    { name: "r0", claims: [send("a")] },
    { name: "r1", claims: [send("b")] },
    { name: "r2", claims: [send("c")] },
  ], { owed: ["effect 0", "effect 1", "backlog 0"], contentOf });
  deepStrictEqual(check.violations.length, 1);
  match(check.violations[0]!, /^r0 claimed 1, r1 claimed 1, r2 claimed 1: .*left behind/);
});

Deno.test("claimsCheck: a capped sweep leaves the owed set unclaimed", () => {
  const check = claimsCheck("claims", [{ name: "boot", claims: [send("a"), send("b")] }], {
    owed: ["effect 0", "effect 1", "backlog 0"],
    contentOf,
  });
  deepStrictEqual(check.violations, ['owed and not claimed: "backlog 0"']);
});

Deno.test("markerShows: a marker needs a character a reader sees", () => {
  for (const visible of ["[resent after a restart] ", "↻ ", "e\u0301", "🔁"]) {
    deepStrictEqual(markerShows(visible), true, JSON.stringify(visible));
  }
  const invisible = ["", " ", "\u200b", "\u200d\u2060", "\ufeff", "\u00a0\t", " \u0301", "\u3164"];
  for (const marker of invisible) {
    deepStrictEqual(markerShows(marker), false, JSON.stringify(marker));
  }
});

Deno.test("judgeOutbox: a resend behind a zero-width marker fails the marker check", async () => {
  const dir = Deno.makeTempDirSync();
  try {
    const arrival = (marker: string | null): Arrival => ({
      key: "o1",
      obligationId: "o1",
      content: `${marker ?? ""}effect 0`,
      marker,
      pid: 1,
    });
    const obligation = {
      obligationId: "o1",
      content: "effect 0",
      state: "delivered",
      deliveryFence: 2,
      lastError: null,
    };
    const read = { obligations: [obligation], invariants: [] };
    const judged = await judgeOutbox({
      target: "unused: the reads are given",
      db: `${dir}/none.db`,
      arrivals: [arrival(null), arrival("\u200b")],
      idempotent: false,
      policy: "marked-at-least-once",
      histories: [{ content: "effect 0", kind: "sent" }],
      reads: [read, read],
      sound: [],
    });
    const byName = new Map(judged.checks.map((c) => [c.name, c.violations]));
    deepStrictEqual(
      byName.get("copies per obligation (unmarked, marked) under marked-at-least-once"),
      [],
    );
    deepStrictEqual(byName.get("each copy carries the recorded content"), []);
    const marker = byName.get("every recovery marker shows")!;
    deepStrictEqual(marker.length, 1);
    match(marker[0]!, /"effect 0" .*\(U\+200B\), which has no visible character/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("store folder: every entry beside the database, SQLite's idle files aside", () => {
  withStoreFolder((dir, db) => {
    Deno.writeTextFileSync(`${db}-shm`, "shared memory");
    Deno.writeFileSync(`${db}-wal`, new Uint8Array());
    const before = snapshotStoreFolder(db);
    deepStrictEqual([...before.keys()], ["store.db"]);
    // An idle open and close: -shm rewritten, the empty -wal gone, an empty -journal made.
    Deno.writeTextFileSync(`${db}-shm`, "other memory");
    Deno.removeSync(`${db}-wal`);
    Deno.writeFileSync(`${db}-journal`, new Uint8Array());
    deepStrictEqual(folderChanges(before, snapshotStoreFolder(db)), []);
    // The store's own files are state: created, rewritten, a folder, a non-empty journal.
    Deno.writeTextFileSync(`${dir}/outbox-state.json`, '{"boots":1}');
    Deno.mkdirSync(`${dir}/locks`);
    Deno.writeTextFileSync(`${dir}/locks/owner`, "42");
    Deno.writeTextFileSync(`${db}-journal`, "hot");
    const middle = snapshotStoreFolder(db);
    deepStrictEqual(folderChanges(before, middle).map((c) => c.split(" (")[0]), [
      "locks created",
      "locks/owner created",
      "outbox-state.json created",
      "store.db-journal created",
    ]);
    Deno.writeTextFileSync(`${dir}/outbox-state.json`, '{"boots":2}');
    Deno.writeTextFileSync(`${dir}/locks/owner`, "4242");
    const changes = folderChanges(middle, snapshotStoreFolder(db));
    deepStrictEqual(changes.length, 2);
    match(changes[0]!, /^locks\/owner went from 2 to 4 bytes/);
    match(changes[1]!, /^outbox-state\.json changed at byte 9 \(11 bytes, sha256 \w+ → \w+\)$/);
  });
});

Deno.test("store folder: an -shm, -wal or -journal of another name is the store's own", () => {
  withStoreFolder((dir, db) => {
    const before = snapshotStoreFolder(db);
    Deno.writeTextFileSync(`${dir}/side.db-shm`, "x");
    Deno.writeFileSync(`${dir}/side.db-wal`, new Uint8Array());
    deepStrictEqual(folderChanges(before, snapshotStoreFolder(db)).map((c) => c.split(" (")[0]), [
      "side.db-shm created",
      "side.db-wal created",
    ]);
    deepStrictEqual(fileEntry(new Uint8Array()).digest, "e3b0c44298fc1c14");
  });
});
