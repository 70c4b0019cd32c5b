// What the leg probe's child (`children/probe.ts`) tells its parent (`probe_store.ts`):
// one JSON line on stdout, and a distinct exit code when the store threw, so that the
// parent reports the store's own error rather than a timeout or a bare exit code. No
// imports: children load it.

/**
 * The probe child's exit code when the target failed to load, the store threw, or its
 * first appends answered outside the contract.
 */
export const PROBE_THREW = 12;

/**
 * Where the probe child was when the store threw.
 *
 * @example
 * ```ts
 * import type { ProbeStage } from "./_probe_line.ts";
 * const stage: ProbeStage = "openStore"; // the store threw from openStore itself
 * ```
 */
export type ProbeStage =
  | "load"
  | "openStore"
  | "createSession"
  | "appendMessage"
  | "getMessages";

/** An error the store threw in the probe child. */
export interface ProbeThrown {
  /** Where: loading the target, `openStore`, one of the first writes, or reading them back. */
  stage: ProbeStage;
  /** The error's name (`Error`, `TargetError`, the store's own class). */
  name: string;
  /** Its message. */
  message: string;
  /**
   * Whether a permission refusal is in its cause chain (`NotCapable`, `PermissionDenied`,
   * or Deno's `Requires … access` words: a module import refused, a wrapped refusal).
   */
  permission: boolean;
}

/** The probe child's line. */
export interface ProbeLine {
  /** The store's methods (when it opened and wrote). */
  methods?: string[];
  /** The store's own account of its journal mode (SessionDB's `journalModeReason`). */
  journalModeReason?: string;
  /** What the store threw (then the child exits with {@linkcode PROBE_THREW}). */
  threw?: ProbeThrown;
  /**
   * How its first appends' answers break the contract (then the child exits with
   * {@linkcode PROBE_THREW}).
   */
  answered?: string;
}

/** The thrown value as a {@linkcode ProbeThrown}. */
export function thrownAt(stage: ProbeStage, error: unknown): ProbeThrown {
  const e = error instanceof Error ? error : new Error(String(error));
  let permission = false;
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 8; c = c.cause, depth++) {
    if (c.name === "NotCapable" || c.name === "PermissionDenied") permission = true;
    // Deno refuses a module import as a TypeError, and a store may wrap a refusal without
    // its cause: Deno's own words say so then.
    if (/Requires \w+ access/.test(c.message)) permission = true;
  }
  return { stage, name: e.name, message: e.message, permission };
}
