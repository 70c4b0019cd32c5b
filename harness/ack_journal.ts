/**
 * The child side of an acknowledgement journal: one JSON line per operation the store
 * acknowledged, appended only after the store returned. One `write` per line, so a
 * SIGKILL leaves at most the final line torn.
 *
 * @example
 * ```ts
 * import { AckWriter, readAckJournal } from "./ack_journal.ts";
 * const path = `${Deno.makeTempDirSync()}/acks.jsonl`;
 * const acks = new AckWriter(path);
 * acks.write({ i: 0, rowid: 1 });
 * acks.close();
 * console.log(readAckJournal(path)); // [{ i: 0, rowid: 1 }]
 * ```
 */
export class AckWriter {
  #file: Deno.FsFile;
  #encoder = new TextEncoder();

  /**
   * Opens (appending) the journal.
   *
   * @param path The journal file.
   */
  constructor(path: string) {
    this.#file = Deno.openSync(path, { append: true, create: true });
  }

  /**
   * Appends one acknowledged operation.
   *
   * @param entry A JSON-serialisable record.
   */
  write(entry: unknown): void {
    const bytes = this.#encoder.encode(JSON.stringify(entry) + "\n");
    let written = 0;
    while (written < bytes.length) written += this.#file.writeSync(bytes.subarray(written));
  }

  /** Closes the journal. */
  close(): void {
    this.#file.close();
  }
}

/**
 * Raised when a journal line other than the last cannot be parsed.
 *
 * @example
 * ```ts
 * import { AckJournalError, readAckJournal } from "./ack_journal.ts";
 * const path = `${Deno.makeTempDirSync()}/acks.jsonl`;
 * Deno.writeTextFileSync(path, 'not json\n{"i":1}\n'); // only a final line may be torn
 * try {
 *   readAckJournal(path);
 * } catch (error) {
 *   console.log(error instanceof AckJournalError); // true
 * }
 * ```
 */
export class AckJournalError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AckJournalError";
  }
}

/**
 * Reads an acknowledgement journal. A torn final line (no newline, or unparsable) is
 * dropped; a bad line anywhere else is corruption and throws.
 *
 * @param path The journal file; a missing file reads as empty.
 * @returns The acknowledged entries, in order.
 * @example
 * ```ts
 * import { readAckJournal } from "./ack_journal.ts";
 * const path = `${Deno.makeTempDirSync()}/acks.jsonl`;
 * Deno.writeTextFileSync(path, '{"i":0,"rowid":1}\n{"i":1,"ro'); // torn by a SIGKILL
 * console.log(readAckJournal<{ i: number; rowid: number }>(path)); // [{ i: 0, rowid: 1 }]
 * ```
 */
export function readAckJournal<T = Record<string, unknown>>(path: string): T[] {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  const lines = text.split("\n");
  lines.pop(); // "" after a final newline, or the torn final line
  return lines.map((line, index) => {
    try {
      return JSON.parse(line) as T;
    } catch (error) {
      throw new AckJournalError(
        `Cannot read acknowledgement journal "${path}": line ${index + 1} is not JSON: ${
          line.slice(0, 80)
        }`,
        { cause: error },
      );
    }
  });
}

/**
 * Counts complete lines without parsing them (cheap enough to poll).
 *
 * @param path The journal file.
 * @returns The number of newline-terminated lines.
 * @example
 * ```ts
 * import { AckWriter, countAcks } from "./ack_journal.ts";
 * const path = `${Deno.makeTempDirSync()}/acks.jsonl`;
 * const acks = new AckWriter(path);
 * acks.write({ i: 0 });
 * acks.write({ i: 1 });
 * acks.close();
 * console.log(countAcks(path)); // 2
 * ```
 */
export function countAcks(path: string): number {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return 0;
    throw error;
  }
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) n++;
  return n;
}
