import type { EntityManager } from '@mikro-orm/postgresql';
import type { ToolCallStatus } from '../../db/entities/index.js';

// A tool call's row (tool_calls), written once its outcome is known, by whoever knows it first:
// the tool's step, or the call workflow when the call ended first (`canceled`) or the step gave up
// without an answer. Writes are idempotent by the tool call's id; a `canceled` row keeps its
// status and result (what the model was given: nothing), and takes the step's counts when the
// request it did not wait for comes back.

export interface ToolCallRow {
  id: string;
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
  status: ToolCallStatus;
  attempts: number;
  responseStatus: number | null;
  result: string | null;
  durationMs: number | null;
  afterLineIndex: number;
  /** When the model decided (workflow time, ISO). */
  createdAt: string;
}

export async function writeToolCall(em: EntityManager, row: ToolCallRow): Promise<void> {
  await em.getConnection().execute(
    `insert into tool_calls (id, call_id, name, arguments, status, attempts, response_status, result, duration_ms, after_line_index, created_at)
     values (?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?)
     on conflict (id) do update set
       attempts = greatest(tool_calls.attempts, excluded.attempts),
       response_status = coalesce(excluded.response_status, tool_calls.response_status),
       duration_ms = coalesce(excluded.duration_ms, tool_calls.duration_ms),
       status = case when tool_calls.status = 'canceled' then tool_calls.status else excluded.status end,
       result = case when tool_calls.status = 'canceled' then tool_calls.result else excluded.result end`,
    [
      row.id,
      row.callId,
      row.name,
      JSON.stringify(row.arguments),
      row.status,
      row.attempts,
      row.responseStatus,
      row.result,
      row.durationMs,
      row.afterLineIndex,
      row.createdAt,
    ],
  );
}
