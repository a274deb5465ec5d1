import { uuidSchema } from './common.js';

export const apiKeyInfoSchema = {
  type: 'object',
  required: ['object', 'id', 'workspace_id', 'workspace_name', 'scopes'],
  additionalProperties: false,
  properties: {
    object: { const: 'api_key' },
    id: uuidSchema,
    workspace_id: uuidSchema,
    workspace_name: { type: ['string', 'null'] },
    scopes: { type: 'array', items: { type: 'string' } },
  },
} as const;
