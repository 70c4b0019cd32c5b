// What cell 11's power-loss writer (`children/renewer.ts`) and its judge share: the holders,
// the short lease, the journal's lines.
import type { Answer } from "../contract/typed.ts";

/** The writer's holders, named without `pid=`: only the lease's expiry decides. */
export const RENEWER_HOLDERS = { durable: "cell11-renewer", stale: "cell11-stale" } as const;

/** The short lease the writer renews to an hour (the judge waits past it). */
export const RENEWER_LEASE_MS = 500;

/**
 * A journal line of the writer: a renewal invoked (`inv`) or answered (`ack`); `renew` of
 * a live lease, `stale` of a lapsed one.
 */
export interface RenewalEntry {
  k: "inv" | "ack";
  op: "renew" | "stale";
  /** The session. */
  s: string;
  /** When its lock was taken (`renew`) or had lapsed (`stale`), ms since the epoch. */
  at: number;
  /** What the store answered (`ack` only). */
  answer?: Answer;
  /** When it answered (`ack` only). */
  t1?: number;
}
