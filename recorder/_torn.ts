// The torn last writes of an instant (crash_states.ts): the last unsynced write of each
// file cut at every sector boundary it spans and one byte before its end, the part after
// the cut zeroed and then seeded garbage, everything else pending kept.
import { seededRandom } from "../harness/seeded_random.ts";
import type { FsModel, Inode } from "./_fs_model.ts";
import type { Choice, CrashState, PendingOp, PowerLossOptions, TornWrite } from "./_types.ts";

/** The sector size torn writes are cut at (4 KiB boundaries are marked among them). */
const SECTOR = 512;

/**
 * The cuts of a write at `offset` of `length` bytes: every 512-byte sector boundary
 * strictly inside it (the 4 KiB ones marked so), then one byte before its end when that
 * is no boundary already. A write of one byte cannot be torn.
 *
 * @param offset The write's file offset.
 * @param length Its length.
 * @returns The cuts, as file offsets, in order.
 * @example
 * ```ts
 * import { tearCuts } from "./crash_states.ts";
 * console.log(tearCuts(4000, 600)); // [{ at: 4096, boundary: "4096" }, { at: 4599, boundary: "byte" }]
 * ```
 */
export function tearCuts(
  offset: number,
  length: number,
): { at: number; boundary: TornWrite["boundary"] }[] {
  const cuts: { at: number; boundary: TornWrite["boundary"] }[] = [];
  if (length < 2) return cuts;
  const end = offset + length;
  for (let at = (Math.floor(offset / SECTOR) + 1) * SECTOR; at < end; at += SECTOR) {
    cuts.push({ at, boundary: at % 4096 === 0 ? "4096" : "512" });
  }
  if (cuts.at(-1)?.at !== end - 1) cuts.push({ at: end - 1, boundary: "byte" });
  return cuts;
}

/** The name an inode has now (or had durably), for labels. */
function nameOf(model: FsModel, inode: Inode): string {
  for (const [name, node] of model.names) if (node === inode) return name;
  for (const [name, node] of model.durableNames) if (node === inode) return name;
  return `inode ${inode.id}`;
}

/**
 * The enumerated torn states of one instant: the last unsynced write (2 bytes or more)
 * of each file cut at each of its {@linkcode tearCuts}, the part after the cut zeroed,
 * then seeded garbage; every other pending operation kept, names as they are now.
 */
export function* tornLastWrites(
  model: FsModel,
  instant: {
    /** The operations not yet synced, in order. */
    pending: PendingOp[];
    /** The names every state keeps. */
    names: Choice["names"];
    /** Makes a state of a choice, its files built when read. */
    lazy: (label: string, choice: Choice, extra: string, torn?: TornWrite) => CrashState;
  },
  options: PowerLossOptions,
): Generator<CrashState> {
  const { pending, names, lazy } = instant;
  const last = new Map<Inode, number>();
  pending.forEach((p, i) => {
    if ("data" in p.op && p.op.data.length >= 2) last.set(p.inode, i);
  });
  if (last.size && options.stats) options.stats.tearable++;
  for (const [inode, index] of last) {
    const { seq, op } = pending[index]!;
    if (!("data" in op)) continue;
    const file = nameOf(model, inode);
    for (const { at, boundary } of tearCuts(op.offset, op.data.length)) {
      for (const fill of ["zero", "garbage"] as const) {
        // Seeded by the write and the cut alone: one key, one content, at any instant.
        const random = seededRandom((options.seed ?? 1) ^ Math.imul(seq, 0x9e3779b1) ^ at);
        const torn: TornWrite = { file, seq, at, boundary, fill };
        if (options.stats) options.stats.torn++;
        yield lazy(
          `torn ${file} #${seq} at ${at} (${
            boundary === "byte" ? "one byte before its end" : `${boundary}-byte sector`
          }), ${fill}`,
          {
            keep: () => true,
            names,
            cut: { index, at, fill },
            garbage: () => Math.floor(random() * 256),
          },
          `cut ${seq}@${at}:${fill}`,
          torn,
        );
      }
    }
  }
}
