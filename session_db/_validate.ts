// Checks of the caller's input, before any SQL runs.
import { InvalidArgumentError } from "./errors.ts";
import { JOURNAL_MODES } from "./journal_mode.ts";
import {
  MAX_SESSION_ID_LENGTH,
  MESSAGE_ROLES,
  type NewMessage,
  type SessionDBOptions,
} from "./types.ts";

/** Refuses a path that is not a non-empty string or an unknown journal mode. */
export function checkOpenArguments(path: string, options: SessionDBOptions): void {
  if (typeof path !== "string" || path === "") {
    throw new InvalidArgumentError("Invalid database path: it must be a non-empty string");
  }
  if (options.journalMode !== undefined && !JOURNAL_MODES.includes(options.journalMode)) {
    throw new InvalidArgumentError(
      `Invalid journal mode "${options.journalMode}": use one of ${JOURNAL_MODES.join(", ")}`,
    );
  }
}

export function checkSessionId(id: unknown, what = "session id"): string {
  if (typeof id !== "string" || id.length === 0) {
    throw new InvalidArgumentError(`Invalid ${what}: it must be a non-empty string`);
  }
  if (id.length > MAX_SESSION_ID_LENGTH) {
    throw new InvalidArgumentError(
      `Invalid ${what}: ${id.length} characters is over the limit of ${MAX_SESSION_ID_LENGTH}`,
    );
  }
  if (id.includes("\0")) {
    throw new InvalidArgumentError(`Invalid ${what}: it contains a NUL character`);
  }
  checkText(id, what);
  return id;
}

/**
 * Refuses a string UTF-8 cannot store: SQLite's text is UTF-8, so a lone surrogate
 * would be silently replaced by U+FFFD and the stored text would differ from the
 * acknowledged one.
 */
export function checkText(value: string | null | undefined, what: string): void {
  if (typeof value !== "string" || value.isWellFormed()) return;
  let at = 0;
  for (; at < value.length; at++) {
    const unit = value.charCodeAt(at);
    const next = value.charCodeAt(at + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) at++;
    else if (unit >= 0xd800 && unit <= 0xdfff) break;
  }
  const unit = value.charCodeAt(at).toString(16).toUpperCase();
  throw new InvalidArgumentError(
    `Invalid ${what}: it contains a lone surrogate (U+${unit} at index ${at}), which UTF-8 cannot store (repair the string, e.g. with toWellFormed(), before writing it)`,
  );
}

export function checkMessage(message: NewMessage): void {
  if (!(MESSAGE_ROLES as readonly string[]).includes(message?.role)) {
    throw new InvalidArgumentError(
      `Invalid message role "${message?.role}": use one of ${MESSAGE_ROLES.join(", ")}`,
    );
  }
  if (message.content !== null && typeof message.content !== "string") {
    throw new InvalidArgumentError("Invalid message content: it must be a string or null");
  }
  checkText(message.content, "message content");
  checkText(message.toolCallId, "tool call id");
  checkText(message.toolCalls, "tool calls");
  checkText(message.toolName, "tool name");
}
