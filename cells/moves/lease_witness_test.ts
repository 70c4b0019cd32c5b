import { ok, rejects, strictEqual } from "node:assert/strict";
import { spawnChild } from "../../harness/child.ts";
import { currentLeg } from "../../harness/legs.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { testFolder } from "../../internal/_test_folder.ts";
import { SessionDB } from "../../session_db/mod.ts";
import { openStore as openWholeSeconds } from "../testdata/whole_second_leases_target.ts";
import { awaitLapse, type LeaseStore, stopPastLease, takeWitness } from "./lease_witness.ts";
import { processStopped } from "./kill.ts";

type Opened = LeaseStore & { close(): unknown };

const TTL_MS = 50;

/** A store open on a fresh file, closed after `use`. */
async function withFresh(open: (path: string) => Opened, use: (store: Opened) => Promise<void>) {
  const store = open(`${testFolder()}/store.db`);
  try {
    await use(store);
  } finally {
    await store.close();
  }
}

const reference = (path: string) => SessionDB.open(path);

Deno.test("a witness of a lease kept in milliseconds lapses soon after it ends", async () => {
  await withFresh(reference, async (store) => {
    const witness = await takeWitness(store, { session: "w", ttlMs: TTL_MS });
    const overrun = await awaitLapse(store, witness, { what: "the witness to lapse" });
    ok(Date.now() > witness.takenAt + TTL_MS, "the wait ended before the lease did");
    ok(overrun < 1_000, `it lapsed ${overrun} ms after it ended`);
  });
});

Deno.test("a witness of a lease kept in whole seconds lapses on the second after it", async () => {
  await withFresh((path) => openWholeSeconds(path, {}), async (store) => {
    const before = Date.now();
    const witness = await takeWitness(store, { session: "w", ttlMs: TTL_MS });
    await awaitLapse(store, witness, { what: "the witness to lapse" });
    const second = Math.ceil((before + TTL_MS) / 1000) * 1000;
    ok(Date.now() >= second, `it lapsed at ${Date.now()}, before the second ${second}`);
  });
});

Deno.test("a lease that never lapses fails the wait, naming the lease", async () => {
  const neverLapses = (path: string): Opened => {
    const store = SessionDB.open(path);
    const held = new Set<string>();
    return {
      createSession: (id) => store.createSession(id),
      close: () => store.close(),
      tryAcquireCompressionLock: (session, holder, ttlMs) =>
        !held.has(session) && held.add(session) &&
        store.tryAcquireCompressionLock(session, holder, ttlMs),
    };
  };
  await withFresh(neverLapses, async (store) => {
    const witness = await takeWitness(store, { session: "w", ttlMs: TTL_MS });
    await rejects(
      awaitLapse(store, witness, { what: "the witness to lapse", overrunMs: 200 }),
      (error: Error) =>
        error.name === "Error" &&
        /still refused the 50 ms lease of "w" \d+ ms after/.test(error.message),
    );
  });
});

Deno.test("a store refusing a free lock cannot take a witness", async () => {
  const refusing = (path: string): Opened => {
    const store = SessionDB.open(path);
    return {
      createSession: (id) => store.createSession(id),
      close: () => store.close(),
      tryAcquireCompressionLock: () => false,
    };
  };
  await withFresh(refusing, async (store) => {
    await rejects(
      takeWitness(store, { session: "w", ttlMs: TTL_MS }),
      /Cannot take the free compression lock of "w" for 50 ms: returned false/,
    );
  });
});

Deno.test("a holder stopped past its lease stays stopped until its witness lapsed", async () => {
  const runDir = testFolder();
  // A holder that counts its heartbeats in a file every few ms, as the cells' holders do.
  const script = new URL(
    `data:application/typescript,let n = 0; for (;;) { Deno.writeTextFileSync("beat", String(++n)); await new Promise((r) => setTimeout(r, 3)); }`,
  );
  const beats = () => {
    try {
      return Number(Deno.readTextFileSync(`${runDir}/beat`));
    } catch {
      return 0;
    }
  };
  const child = spawnChild({ script, runDir, library: currentLeg().library });
  const store = SessionDB.open(`${runDir}/store.db`);
  try {
    const acquiredAt = Date.now();
    const witness = await takeWitness(store, { session: "w", ttlMs: TTL_MS });
    await waitFor(() => beats() > 0, { what: "the holder's first beat", children: [child] });
    const { beats: stalled, overrunMs } = await stopPastLease(child, {
      who: "the holder",
      acquiredAt,
      leaseMs: TTL_MS,
      beats,
      lapse: { store, witness },
    });
    strictEqual(processStopped(child.pid), true, "the holder runs");
    ok(stalled <= 1, `the holder beat ${stalled} times while stopped`);
    ok(Date.now() > witness.takenAt + TTL_MS, "the wait ended before the lease did");
    ok(overrunMs !== undefined && overrunMs >= 0, `overrun ${overrunMs}`);
  } finally {
    store.close();
    child.signal("SIGKILL");
    await child.status;
  }
});
