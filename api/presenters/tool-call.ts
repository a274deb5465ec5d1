import type { ToolCall } from '../../db/entities/index.js';

/** The spec's ToolCall object. */
export function presentToolCall(toolCall: ToolCall) {
  return {
    object: 'tool_call',
    id: toolCall.id,
    call_id: toolCall.call,
    name: toolCall.name,
    arguments: toolCall.arguments,
    status: toolCall.status,
    attempts: toolCall.attempts,
    response_status: toolCall.responseStatus ?? null,
    result: toolCall.result ?? null,
    duration_ms: toolCall.durationMs ?? null,
    created_at: toolCall.createdAt.toISOString(),
  };
}
