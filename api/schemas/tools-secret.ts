import { TOOLS_SECRET_PATTERN } from '../../lib/agent-tools/tools-secret.js';
import { uuidSchema } from './common.js';

/** The answer of POST /agents/{agent_id}/tools-secret (agent-tools spec section 2). */
export const toolsSecretSchema = {
  type: 'object',
  required: ['object', 'agent_id', 'secret'],
  additionalProperties: false,
  properties: {
    object: { const: 'tools_secret' },
    agent_id: uuidSchema,
    secret: {
      type: ['string', 'null'],
      pattern: TOOLS_SECRET_PATTERN,
      description: 'Shown this once; null when the answer is replayed through an Idempotency-Key.',
    },
  },
} as const;
