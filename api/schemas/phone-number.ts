import {
  PHONE_NUMBER_CAPABILITIES,
  PHONE_NUMBER_REACH,
  PHONE_NUMBER_STATUSES,
} from '../../db/entities/index.js';
import { E164_PATTERN } from '../../lib/e164.js';
import { dateTimeSchema, UUID_MAX_LENGTH, uuidSchema } from './common.js';

export const phoneNumberUpdateSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['agent_id'],
  properties: {
    agent_id: {
      type: ['string', 'null'],
      format: 'uuid',
      maxLength: UUID_MAX_LENGTH,
      description: 'The agent that answers; null for none.',
    },
  },
} as const;

export const phoneNumberSchema = {
  type: 'object',
  required: ['object', 'id', 'number', 'label', 'agent_id', 'status', 'capabilities', 'created_at'],
  additionalProperties: false,
  properties: {
    object: { const: 'phone_number' },
    id: uuidSchema,
    number: { type: 'string', pattern: E164_PATTERN },
    label: { type: ['string', 'null'] },
    agent_id: { type: ['string', 'null'], format: 'uuid' },
    status: { enum: [...PHONE_NUMBER_STATUSES] },
    capabilities: {
      type: 'array',
      items: { enum: [...PHONE_NUMBER_CAPABILITIES, ...PHONE_NUMBER_REACH] },
      description:
        'What the number was created with (`voice`, `sms`) and, for a voice number, how it is reached: `sip` while the deployment takes calls over a SIP trunk (CARRIER=sip), whose SIP side then answers INVITEs to it.',
    },
    created_at: dateTimeSchema,
  },
};
