import { E164_PATTERN } from '../../lib/e164.js';
import { E164_MAX_LENGTH } from './common.js';

// An agent's transfer destinations (telephony spec section 1): the only numbers its model may
// transfer a call to. Where a number may be dialled (emergency, high-cost, the workspace's
// dialing countries, the agent's own numbers) and that no number is listed twice are checked by
// api/routes/transfer-destinations.ts in the handler.

export const MAX_TRANSFER_DESTINATIONS = 20;

const destinationRequestSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['number', 'description'],
  properties: {
    number: {
      type: 'string',
      pattern: E164_PATTERN,
      maxLength: E164_MAX_LENGTH,
      description: 'E.164; a number the workspace may dial, listed once.',
    },
    description: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'What the number is for; the model reads it to choose ("the front desk", "billing").',
    },
    mode: {
      enum: ['cold', 'warm'],
      default: 'cold',
      description: 'cold: the caller is handed over at once; warm: the person there is briefed first.',
    },
    message: {
      type: ['string', 'null'],
      maxLength: 500,
      description: 'For a warm transfer, what the person there is told first; null: a summary of the call.',
    },
  },
} as const;

/** `transfer_destinations` of POST and PATCH /agents: the whole array (a PATCH replaces it). */
export const transferDestinationsRequestSchema = {
  type: 'array',
  maxItems: MAX_TRANSFER_DESTINATIONS,
  items: destinationRequestSchema,
  description:
    'The numbers the agent may transfer a call to (at most 20); the model is offered these and no other. A PATCH replaces them all.',
} as const;

export const transferDestinationSchema = {
  type: 'object',
  required: ['number', 'description', 'mode', 'message'],
  additionalProperties: false,
  properties: {
    number: { type: 'string' },
    description: { type: 'string' },
    mode: { enum: ['cold', 'warm'] },
    message: { type: ['string', 'null'] },
  },
} as const;
