import {
  MAX_TOOLS,
  SPEAK_WHILE_WAITING_MAX_LENGTH,
  TOOL_DESCRIPTION_MAX_LENGTH,
  TOOL_NAME_MAX_LENGTH,
  TOOL_NAME_PATTERN,
  TOOL_TIMEOUT_SECONDS,
} from '../../lib/agent-tools/tool-rules.js';
import { WEBHOOK_URL_MAX_LENGTH } from '../../lib/webhooks/url-rules.js';

// An agent's tools (agent-tools spec section 1). What a schema cannot say (names unique within the
// agent, `parameters` a valid 2020-12 schema of at most 16 KiB, the URL's address rules) is checked
// by lib/agent-tools/tools-problem.ts in the handler.

const toolRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'description', 'parameters', 'url'],
  properties: {
    type: { const: 'function', description: 'The only kind of tool; may be left out.' },
    name: {
      type: 'string',
      minLength: 1,
      maxLength: TOOL_NAME_MAX_LENGTH,
      pattern: TOOL_NAME_PATTERN,
      description:
        'A letter, then letters, digits and _ (at most 64); unique within the agent; end_call and transfer_call are reserved.',
    },
    description: {
      type: 'string',
      minLength: 1,
      maxLength: TOOL_DESCRIPTION_MAX_LENGTH,
      description: 'What the model reads to decide when to call the tool.',
    },
    // "type": "object" is checked with the rest of the schema in the handler: stated here, the
    // generated client's type would differ from the handler's (test/route-input-types.ts).
    parameters: {
      type: 'object',
      additionalProperties: true,
      description:
        'A JSON Schema (draft 2020-12) of "type": "object" describing the arguments; at most 16 KiB as JSON.',
    },
    url: {
      type: 'string',
      format: 'uri',
      minLength: 1,
      maxLength: WEBHOOK_URL_MAX_LENGTH,
      description: 'Public https URL the tool call is sent to, under the webhook endpoints’ URL rules.',
    },
    timeout_seconds: {
      type: 'integer',
      minimum: TOOL_TIMEOUT_SECONDS.min,
      maximum: TOOL_TIMEOUT_SECONDS.max,
      default: TOOL_TIMEOUT_SECONDS.default,
      description: 'One attempt’s time limit in seconds.',
    },
    speak_while_waiting: {
      type: ['string', 'null'],
      maxLength: SPEAK_WHILE_WAITING_MAX_LENGTH,
      description: 'Said as soon as the tool is called, unless the model’s own words came with the call.',
    },
  },
} as const;

/** `tools` of POST and PATCH /agents: the whole array (a PATCH replaces it). */
export const toolsRequestSchema = {
  type: 'array',
  maxItems: MAX_TOOLS,
  items: toolRequestSchema,
  description: 'The functions the agent’s language model may call (at most 20); a PATCH replaces them all.',
} as const;

export const toolSchema = {
  type: 'object',
  required: ['type', 'name', 'description', 'parameters', 'url', 'timeout_seconds', 'speak_while_waiting'],
  additionalProperties: false,
  properties: {
    type: { const: 'function' },
    name: { type: 'string' },
    description: { type: 'string' },
    parameters: { type: 'object', additionalProperties: true },
    url: { type: 'string' },
    timeout_seconds: { type: 'integer' },
    speak_while_waiting: { type: ['string', 'null'] },
  },
} as const;
