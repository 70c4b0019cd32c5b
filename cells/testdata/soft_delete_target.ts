/**
 * Test target: the reference store, correct, whose messages say whether they are active as a
 * soft delete does (TypeORM's `@DeleteDateColumn`, GORM's `DeletedAt`, Rails' `deleted_at`):
 * no `active` field, a `deletedAt` of `null` for an active message and the time of its rewind
 * for one a rewind deactivated. The cells must read `deletedAt` as the contract's `active`.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { respelled, spelledEach } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** A message with `deletedAt` in place of `active`. */
function softDeleted(message: unknown): unknown {
  if (message === null || typeof message !== "object") return message;
  const { active, ...fields } = message as { active?: boolean };
  return { ...fields, deletedAt: active === false ? new Date(0) : null };
}

/** `store` answering its messages with a soft delete's `deletedAt`. */
export function withSoftDeletes<T extends object>(store: T): T {
  return respelled(store, { getMessages: spelledEach(softDeleted) });
}

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return withSoftDeletes(openReference(path, options));
}
