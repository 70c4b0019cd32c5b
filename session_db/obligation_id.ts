import { sha256Hex } from "../internal/sha256.ts";

/**
 * The obligation id: a hash of session, message reference and content, so that
 * recording the same obligation twice is a no-op.
 *
 * @param sessionId The session.
 * @param messageRef What the obligation delivers (e.g. a message id).
 * @param content The payload.
 * @returns 32 hex characters.
 * @example
 * ```ts
 * import { obligationId } from "./obligation_id.ts";
 * console.log(obligationId("s1", "m1", "hello").length); // 32
 * ```
 */
export function obligationId(sessionId: string, messageRef: string, content: string): string {
  return sha256Hex(JSON.stringify([sessionId, messageRef, content])).slice(0, 32);
}
