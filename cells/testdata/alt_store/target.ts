/**
 * The target for the correct-but-different store ({@linkcode AltStore}).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { ALT_CRASH_POINTS, AltStore } from "./alt_store.ts";

/** Opens the alternative store. */
export function openStore(path: string, options: StoreOptions): Promise<AltStore> {
  return AltStore.open(path, options);
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return [...ALT_CRASH_POINTS];
}
