/**
 * What the test targets that wrap the reference store share: a store whose methods are
 * handed out through a function of their own, and stores serialised by a lock of their own
 * (a lock file's `flock`, a lock directory), correct or checking a request under one hold
 * and writing it under another.
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import { processAlive } from "../../session_db/process.ts";
import { Database } from "../../session_db/sqlite/mod.ts";
import type { StoreOptions } from "../contract/target.ts";

/** A method of the store, bound to it. */
export type Method = (...args: unknown[]) => unknown;

/**
 * The store, each of its methods handed out as `wrap` answers for its name (fields as
 * they are).
 */
export function wrapped<T extends object>(
  store: T,
  wrap: (key: string | symbol, method: Method) => unknown,
): T {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key);
      return typeof value === "function" ? wrap(key, value.bind(target)) : value;
    },
  });
}

/** How a store's message ids map to the reference's: answered, and given back. */
export interface IdMapping {
  /** The id the store answers for the reference's. */
  answered: (id: number) => number;
  /** The reference's id for one the store answered. */
  given: (id: number) => number;
}

/**
 * The store with its message ids mapped: in what it answers (appends, reads) and in what it
 * is given (a rewind's target and expected ids, a fork's message).
 */
export function withMessageIds<T extends object>(store: T, ids: IdMapping): T {
  const out = (id: unknown) => typeof id === "number" ? ids.answered(id) : id;
  const back = (id: unknown) => typeof id === "number" ? ids.given(id) : id;
  const rewindOptions = (options: unknown) => {
    const expected = (options as { expectedActiveIds?: unknown[] } | undefined)
      ?.expectedActiveIds;
    return expected ? { ...options as object, expectedActiveIds: expected.map(back) } : options;
  };
  return wrapped(store, (key, method: Method) => {
    switch (key) {
      case "appendMessage":
        return (...args: unknown[]) => out(method(...args));
      case "appendMessages":
        return (...args: unknown[]) => (method(...args) as unknown[]).map(out);
      case "getMessages":
        return (...args: unknown[]) =>
          (method(...args) as { id: number }[]).map((row) => ({ ...row, id: out(row.id) }));
      case "rewindToMessage":
        return (session: unknown, id: unknown, options?: unknown) =>
          method(session, back(id), rewindOptions(options));
      case "forkSession":
        return (session: unknown, id: unknown, newId: unknown) => method(session, back(id), newId);
      default:
        return method;
    }
  });
}

/** How a test target respells one answer of the reference store. */
export type Spell = (answer: unknown) => unknown;

/** An object with each of `fields` it has respelled (a copy); anything else as it is. */
export function spelledFields(fields: Readonly<Record<string, Spell>>): Spell {
  return (record) => {
    if (record === null || typeof record !== "object") return record;
    const copy: Record<string, unknown> = { ...record };
    for (const [field, spell] of Object.entries(fields)) {
      if (field in copy) copy[field] = spell(copy[field]);
    }
    return copy;
  };
}

/** Each element of an array respelled; anything else as it is. */
export function spelledEach(spell: Spell): Spell {
  return (value) => Array.isArray(value) ? value.map(spell) : value;
}

/** The methods that answer sessions, each session respelled by `session`. */
export function sessionAnswers(session: Spell): Record<string, Spell> {
  const each = spelledEach(session);
  return {
    getSession: session,
    listSessions: each,
    findLiveCompressionChild: session,
    listPendingHandoffs: each,
  };
}

/** The methods that answer obligations (not `sweepRecoverable`), each respelled by `obligation`. */
export function obligationAnswers(obligation: Spell): Record<string, Spell> {
  return {
    recordObligation: obligation,
    getObligation: obligation,
    listObligations: spelledEach(obligation),
  };
}

/** `answer` respelled by `spell`, once it resolves when it is a promise. */
function spelledAnswer(spell: Spell, answer: unknown): unknown {
  return answer instanceof Promise ? answer.then(spell) : spell(answer);
}

/** The store, each method named in `spellings` answering as its spelling respells it. */
export function respelled<T extends object>(
  store: T,
  spellings: Readonly<Record<string, Spell>>,
): T {
  return wrapped(store, (key, method) => {
    const spell = typeof key === "string" ? spellings[key] : undefined;
    return spell ? (...args: unknown[]) => spelledAnswer(spell, method(...args)) : method;
  });
}

/** The store, every method's answer respelled by `spell` (once it resolves). */
export function respelledAll<T extends object>(store: T, spell: Spell): T {
  return wrapped(
    store,
    (_key, method) => (...args: unknown[]) => spelledAnswer(spell, method(...args)),
  );
}

/** A lock of the store's own: calls made under it one at a time; its file closed with the store. */
export interface OwnLock {
  /** Runs `call` holding the lock. */
  locked<T>(call: () => T): T;
  /** Closes the lock's file. */
  close(): void;
}

/** An exclusive `flock` of the file at `path` (Deno's `lockSync`). */
export function fileLock(path: string): OwnLock {
  const file = Deno.openSync(path, { read: true, write: true, create: true });
  return {
    locked: (call) => {
      file.lockSync(true);
      try {
        return call();
      } finally {
        file.unlockSync();
      }
    },
    close: () => file.close(),
  };
}

/**
 * A lock directory at `lock` (proper-lockfile's kind of lock, with the
 * holder's pid inside), one at a time. It is taken by renaming a folder already holding the
 * pid onto `lock` (a rename onto a folder that is not empty fails), so it never exists
 * without its holder's pid; a lock whose holder is dead is moved aside and removed under a
 * `flock` of `<lock>.break`, which releases take too, so that a lock is broken only while
 * the dead holder's own is there.
 */
export function dirLock(lock: string): OwnLock {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const breaker = Deno.openSync(`${lock}.break`, { read: true, write: true, create: true });
  const take = () => {
    const mine = `${lock}.${Deno.pid}.new`;
    Deno.mkdirSync(mine, { recursive: true });
    Deno.writeTextFileSync(`${mine}/pid`, String(Deno.pid));
    for (;;) {
      try {
        Deno.renameSync(mine, lock);
        return;
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists) && !/not empty/i.test(String(error))) {
          throw error;
        }
      }
      breakIfDead();
      Atomics.wait(pause, 0, 0, 2);
    }
  };
  const breakIfDead = () => {
    breaker.lockSync(true);
    try {
      let holder: number;
      try {
        holder = Number(Deno.readTextFileSync(`${lock}/pid`));
      } catch {
        return; // released meanwhile
      }
      if (processAlive(holder)) return;
      const aside = `${lock}.${Deno.pid}.stale`;
      Deno.renameSync(lock, aside);
      Deno.removeSync(aside, { recursive: true });
    } finally {
      breaker.unlockSync();
    }
  };
  // Under the breakers' lock too: a breaker that read a holder's pid must find that holder's
  // lock still there when it sees the holder dead.
  const release = () => {
    const aside = `${lock}.${Deno.pid}.old`;
    breaker.lockSync(true);
    try {
      Deno.renameSync(lock, aside);
    } finally {
      breaker.unlockSync();
    }
    Deno.removeSync(aside, { recursive: true });
  };
  return {
    locked: (call) => {
      take();
      try {
        return call();
      } finally {
        release();
      }
    },
    close: () => breaker.close(),
  };
}

/**
 * The reference store, correct, that serialises its processes with a lock of its own: its
 * open and every call are made holding `lock`, which is closed with it.
 */
export function serialised(path: string, options: StoreOptions, lock: OwnLock): SessionDB {
  const mode = options.journalMode ? { journalMode: options.journalMode } : {};
  const store = lock.locked(() => SessionDB.open(path, mode));
  return wrapped(store, (key, method) => {
    if (key !== "close") return (...args: unknown[]) => lock.locked(() => method(...args));
    return () => {
      try {
        return method();
      } finally {
        lock.close();
      }
    };
  });
}

/**
 * `store` (a serialised one) whose `requestHandoff` checks the handoff's state under one
 * hold of its lock and writes the request under another hold (`lock`, a second handle on
 * the same lock), with raw SQL that checks nothing: broken for cell 2.
 */
export function checkThenRequest(store: SessionDB, path: string, lock: OwnLock): SessionDB {
  const raw = new Database(path);
  raw.exec("PRAGMA busy_timeout = 5000");
  const requestHandoff = (sessionId: string, platform: string): boolean => {
    const state = store.getHandoffState(sessionId);
    if (state === "pending" || state === "running") return false;
    return lock.locked(() =>
      raw.exec(
        "UPDATE sessions SET handoff_state = 'pending', handoff_platform = ?, handoff_error = NULL WHERE id = ?",
        platform,
        sessionId,
      ) === 1
    );
  };
  return wrapped(store, (key, method) => {
    if (key === "requestHandoff") return requestHandoff;
    if (key !== "close") return method;
    return () => {
      raw.close();
      lock.close();
      return method();
    };
  });
}
