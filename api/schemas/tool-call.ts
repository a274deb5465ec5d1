import { TOOL_CALL_STATUSES } from '../../db/entities/index.js';
import { dateTimeSchema, uuidSchema } from './common.js';

/** ToolCall (agent-tools spec section 4): one decision of the model to call a tool, and its outcome. */
export const toolCallSchema = {
  type: 'object',
  required: [
    'object',
    'id',
    'call_id',
    'name',
    'arguments',
    'status',
    'attempts',
    'response_status',
    'result',
    'duration_ms',
    'created_at',
  ],
  additionalProperties: false,
  properties: {
    object: { const: 'tool_call' },
    id: { type: 'string', pattern: '^tc_[0-9a-f]{32}$', description: 'Also the Idempotency-Key sent.' },
    call_id: uuidSchema,
    name: { type: 'string' },
    arguments: { type: 'object', additionalProperties: true, description: 'As the model gave them.' },
    status: {
      enum: [...TOOL_CALL_STATUSES],
      description:
        'succeeded; failed (retries used up); refused (an answer not retried); invalid_arguments (nothing sent); canceled (the call ended first).',
    },
    attempts: { type: 'integer', description: 'Requests sent (0 for invalid_arguments).' },
    response_status: { type: ['integer', 'null'], description: 'HTTP status of the last attempt.' },
    result: { type: ['string', 'null'], description: 'What the model was given.' },
    duration_ms: { type: ['integer', 'null'], description: 'From the first attempt to the answer.' },
    created_at: dateTimeSchema,
  },
} as const;
