/**
 * Test target: the correct-but-different store declaring no crash points, so that cells
 * 3 and 4 walk its publish and rewind with the kill and race series (which it must pass).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { AltStore } from "./alt_store.ts";

/** Opens the alternative store. */
export function openStore(path: string, options: StoreOptions): Promise<AltStore> {
  return AltStore.open(path, options);
}

/** None: every operation is walked by the series instead. */
export function crashPoints(): string[] {
  return [];
}
