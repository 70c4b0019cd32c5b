// The syscall tier's oracle for cell 1's clause, in-process: each crash state is written
// into one scratch folder, recovered by SQLite and opened through the target's own
// openStore (no child per state); a state whose files, or whose recovered files, were
// already read reuses the reading (recorder/recovered.ts).
import type { StoredMessage, StoreOptions, TargetModule } from "../cells/target.ts";
import type { FileSet } from "../recorder/image.ts";
import { RecoveredStates } from "../recorder/recovered.ts";

/** What reopening one state read. */
export interface Recovery {
  /** The session's messages, or `undefined` when the store could not be read. */
  rows?: StoredMessage[];
  /** Why the state is bad whatever was acknowledged (open error, invariant, non-determinism). */
  problems: string[];
}

function message(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message.split("\n")[0]}` : String(error);
}

/** Recovers states of one store file and judges them against acknowledgements. */
export class AppendOracle {
  #target: TargetModule;
  #options: StoreOptions;
  #states: RecoveredStates<Recovery>;
  #dbName: string;
  #session: string;

  constructor(
    target: TargetModule,
    options: StoreOptions,
    scratch: string,
    dbName: string,
    session: string,
  ) {
    this.#target = target;
    this.#options = options;
    this.#states = new RecoveredStates(scratch);
    this.#dbName = dbName;
    this.#session = session;
  }

  /** How many distinct recovered file sets were opened through the target. */
  get opened(): number {
    return this.#states.judged;
  }

  async #read(dir: string): Promise<{ rows: StoredMessage[]; problems: string[] }> {
    const store = await this.#target.openStore(`${dir}/${this.#dbName}`, this.#options);
    try {
      const rows = await store.getMessages(this.#session);
      const problems = (await store.checkInvariants?.()) ?? [];
      return { rows, problems };
    } finally {
      await store.close();
    }
  }

  /** Opens the state twice (recovery, then determinism) and reads the session. */
  recover(files: FileSet, stateKey: string): Promise<Recovery> {
    return this.#states.check({ files, key: stateKey }, "", async (dir) => {
      try {
        const first = await this.#read(dir);
        const second = await this.#read(dir);
        const problems = [...first.problems];
        if (JSON.stringify(first.rows) !== JSON.stringify(second.rows)) {
          problems.push("two recovery passes read different rows");
        }
        return { rows: first.rows, problems };
      } catch (error) {
        return { problems: [`cannot recover the store: ${message(error)}`] };
      }
    });
  }

  /**
   * Cell 1's clause: every acknowledged append present (same id), the messages the
   * contiguous prefix m0..m(N-1) with N >= acknowledged, no duplicate, the store's
   * invariants clean. Returns why the state fails, or `undefined`.
   */
  judge(recovery: Recovery, ackLines: readonly string[]): string | undefined {
    if (recovery.problems.length) return recovery.problems.join("; ");
    const rows = recovery.rows ?? [];
    const acks: { i: number; id: number }[] = [];
    for (const line of ackLines) {
      try {
        acks.push(JSON.parse(line));
      } catch {
        break; // a torn final line was not acknowledged
      }
    }
    for (const [j, row] of rows.entries()) {
      if (row.content !== `m${j}`) {
        return `message ${j} is ${
          JSON.stringify(row.content)
        }, not "m${j}" (a gap, duplicate or reorder)`;
      }
      if (j > 0 && row.id <= rows[j - 1]!.id) return `ids not increasing at message ${j}`;
    }
    if (rows.length < acks.length) {
      return `lost acknowledged appends: ${acks.length} acknowledged, ${rows.length} recovered (m${rows.length}..m${
        acks.length - 1
      } missing)`;
    }
    for (const ack of acks) {
      if (rows[ack.i]!.id !== ack.id) {
        return `message m${ack.i} has id ${rows[ack.i]!.id}, acknowledged as ${ack.id}`;
      }
    }
    return undefined;
  }
}
