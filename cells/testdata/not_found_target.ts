/**
 * Test target: the reference store, correct, that says "no such record" by throwing, as
 * many stores do (an ORM's `findOneOrFail`, a file per record that is not there): an
 * unknown session is a `SessionNotFoundError` (a class that left `name` as `Error`), an
 * unknown obligation Node's `ENOENT`, no live compression child a rejected `NotFoundError`.
 * The cells must read each as the contract's `undefined`.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

class SessionNotFoundError extends Error {}

function enoent(id: unknown): Error {
  return Object.assign(new Error(`ENOENT: no such file or directory, open 'obligations/${id}'`), {
    code: "ENOENT",
  });
}

function notFound(id: unknown): Error {
  const error = new Error(`No live compression child of "${id}"`);
  error.name = "NotFoundError";
  return error;
}

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openReference(path, options);
  const orThrow = (method: Method, thrown: (id: unknown) => Error) => (...args: unknown[]) => {
    const answer = method(...args);
    if (answer === undefined || answer === null) throw thrown(args[0]);
    return answer;
  };
  return wrapped(store, (key, method: Method) => {
    if (key === "getSession") {
      return orThrow(method, (id) => new SessionNotFoundError(`Session "${id}" does not exist`));
    }
    if (key === "getObligation") return orThrow(method, enoent);
    if (key === "findLiveCompressionChild") {
      const sync = orThrow(method, notFound);
      return async (...args: unknown[]) => {
        await Promise.resolve();
        return sync(...args);
      };
    }
    return method;
  });
}
