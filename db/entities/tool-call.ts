import { defineEntity, p } from '@mikro-orm/core';
import { Call } from './call.js';

export const TOOL_CALL_STATUSES = [
  'succeeded',
  'failed',
  'refused',
  'invalid_arguments',
  'canceled',
] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

/**
 * One decision of the agent's language model to call one of the integrator's tools (agent-tools
 * spec section 4). The id (`tc_…`) is made in the call workflow before the first request and sent
 * as the `Idempotency-Key`, so every retry and replay writes this same row.
 */
const ToolCallSchema = defineEntity({
  name: 'ToolCall',
  tableName: 'tool_calls',
  indexes: [{ properties: ['call', 'createdAt', 'id'] }],
  properties: {
    id: p.string().length(35).primary(),
    call: () => p.manyToOne(Call).mapToPk().deleteRule('cascade'),
    name: p.string().length(64),
    arguments: p.json().$type<Record<string, unknown>>(),
    status: p.string().length(20).$type<ToolCallStatus>(),
    /** Requests sent (0 when the arguments did not fit the tool's parameters). */
    attempts: p.integer(),
    responseStatus: p.integer().nullable(),
    /** What the model was given: the answer's body, or the error object as JSON. */
    result: p.text().nullable(),
    durationMs: p.integer().nullable(),
    /**
     * The transcript line the model's decision followed (the person's line of its turn), so a
     * later turn's prompt shows the tool call and its result where they happened.
     */
    afterLineIndex: p.integer(),
    /** When the model decided (workflow time): the list's order. */
    createdAt: p.datetime(),
  },
});

export class ToolCall extends ToolCallSchema.class {}
ToolCallSchema.setClass(ToolCall);

export { ToolCallSchema };
