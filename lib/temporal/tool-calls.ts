import type { ToolCallStatus } from '../../db/entities/index.js';

// The contract between the call workflow and the tool step (agent-tools spec section 3). Each
// tool call is an activity of the call on the `tools` task queue whose type is the tool's name, so
// the Web UI shows it as such; only the tools worker polls that queue, so a tool's name can never
// meet one of the service's own activities.

/** A tool call the model made in its answer (the integrator's tools, not end_call or transfer_call). */
export interface RequestedToolCall {
  name: string;
  /** The arguments as the model gave them, JSON text. */
  arguments: string;
  /** The tool's line while waiting (from the agent's tools as the call started); null: none or unknown tool. */
  speakWhileWaiting: string | null;
  /** One attempt's limit; an unknown tool's is the default (its step refuses it at once). */
  timeoutSeconds: number;
}

/** One tool call and what the model was given, placed after the transcript line it followed. */
export interface ToolExchange {
  id: string;
  name: string;
  arguments: string;
  /** What the model was given: the tool's answer, or an error object as JSON. */
  result: string;
  afterLineIndex: number;
}

/** The tool step's input: one decision of the model, with the id the workflow gave it. */
export interface ToolCallInput {
  callId: string;
  toolCallId: string;
  name: string;
  arguments: string;
  afterLineIndex: number;
  /** When the model decided (workflow time, ISO): the row's `created_at`. */
  decidedAt: string;
}

/** How the tool call ended, for the model and for its row. */
export interface ToolCallResult {
  status: ToolCallStatus;
  result: string;
  attempts: number;
  responseStatus: number | null;
  durationMs: number | null;
}

/** The activity of every tool (any type name on the tools queue reaches it). */
export type ToolActivity = (input: ToolCallInput) => Promise<ToolCallResult>;

/** Attempts of one tool call: the first and at most two retries. */
export const TOOL_CALL_ATTEMPTS = 3;
export const MAX_TOOL_CALLS_PER_TURN = 10;
export const MAX_TOOL_CALLS_PER_CALL = 50;
/** Times a turn's model is told its arguments did not fit and may try again. */
export const INVALID_ARGUMENT_RETRIES_PER_TURN = 2;

/**
 * Which of `requested` tool calls of one answer are sent, given the calls already made in the turn
 * and in the call: the first ones while both limits allow; the rest are told tool_limit.
 */
export function toolCallsAllowed(requested: number, madeThisTurn: number, madeThisCall: number): boolean[] {
  return Array.from(
    { length: requested },
    (_, i) => madeThisTurn + i < MAX_TOOL_CALLS_PER_TURN && madeThisCall + i < MAX_TOOL_CALLS_PER_CALL,
  );
}

/** What the model is told after the last attempt failed. */
export const TOOL_UNAVAILABLE = JSON.stringify({ error: 'tool_unavailable' });
/** What the model is told for a tool call beyond the turn's or the call's limit. */
export const TOOL_LIMIT = JSON.stringify({ error: 'tool_limit' });
export const toolCallId = (uuid: string) => `tc_${uuid.replace(/-/g, '')}`;
