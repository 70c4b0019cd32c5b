// Shared by the cells' child scripts: open the target's store, bound the child's life.
import { openTargetStore, type Store } from "./target.ts";
import { TIMED_OUT } from "../harness/child.ts";

/** A child gives up on its own after this long (the parent's deadlines are shorter). */
export const CHILD_LIFETIME_MS = 90_000;

/** Opens the store named by the target specifier. */
export function openStoreFor(target: string, path: string): Promise<Store> {
  return openTargetStore(target, path);
}

/** Exits with TIMED_OUT once the child has outlived `CHILD_LIFETIME_MS`. */
export function lifetimeGuard(): () => void {
  const end = performance.now() + CHILD_LIFETIME_MS;
  return () => {
    if (performance.now() > end) {
      console.error(`child ${Deno.pid}: lifetime of ${CHILD_LIFETIME_MS} ms passed; exiting`);
      Deno.exit(TIMED_OUT);
    }
  };
}

/** The command-line arguments, checked for count. */
export function childArgs(count: number, usage: string): string[] {
  if (Deno.args.length < count) {
    console.error(`usage: ${usage}`);
    Deno.exit(2);
  }
  return Deno.args;
}
