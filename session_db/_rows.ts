// The tables' rows as SQLite returns them, and their mapping to the public types.
import type {
  HandoffState,
  Message,
  MessageRole,
  Obligation,
  ObligationState,
  Session,
} from "./types.ts";

export type SessionRow = {
  id: string;
  source: string;
  parent_session_id: string | null;
  branch_kind: Session["branchKind"];
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  message_count: number;
  handoff_state: HandoffState | null;
  handoff_platform: string | null;
  handoff_error: string | null;
  rewind_count: number;
  title: string | null;
};

export type MessageRow = {
  id: number;
  session_id: string;
  role: MessageRole;
  content: string | null;
  tool_call_id: string | null;
  tool_calls: string | null;
  tool_name: string | null;
  timestamp: number;
  active: number;
};

export type ObligationRow = {
  obligation_id: string;
  session_id: string;
  message_ref: string;
  content: string;
  state: ObligationState;
  attempts: number;
  delivery_fence: number;
  owner_pid: number | null;
  created_at: number;
  updated_at: number;
  last_error: string | null;
};

export const SESSION_COLUMNS =
  "id, source, parent_session_id, branch_kind, started_at, ended_at, end_reason, message_count, handoff_state, handoff_platform, handoff_error, rewind_count, title";
export const MESSAGE_COLUMNS =
  "id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, active";

export function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    source: row.source,
    parentSessionId: row.parent_session_id,
    branchKind: row.branch_kind,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    messageCount: row.message_count,
    handoffState: row.handoff_state,
    handoffPlatform: row.handoff_platform,
    handoffError: row.handoff_error,
    rewindCount: row.rewind_count,
    title: row.title,
  };
}

export function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    sessionId: row.session_id,
    role: row.role,
    content: row.content,
    toolCallId: row.tool_call_id,
    toolCalls: row.tool_calls,
    toolName: row.tool_name,
    timestamp: row.timestamp,
    active: row.active === 1,
  };
}

export function toObligation(row: ObligationRow): Obligation {
  return {
    obligationId: row.obligation_id,
    sessionId: row.session_id,
    messageRef: row.message_ref,
    content: row.content,
    state: row.state,
    attempts: row.attempts,
    deliveryFence: row.delivery_fence,
    ownerPid: row.owner_pid,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastError: row.last_error,
  };
}
