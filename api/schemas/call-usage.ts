import { dateTimeSchema } from './common.js';

export const usageQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    start: {
      ...dateTimeSchema,
      description: 'Start of the period (inclusive); default the current UTC month.',
    },
    end: {
      ...dateTimeSchema,
      description: 'End of the period (exclusive); default the start of next UTC month.',
    },
  },
} as const;

export const usageSchema = {
  type: 'object',
  required: [
    'object',
    'period',
    'calls',
    'minutes',
    'average_duration_seconds',
    'outcomes',
    'transfer_seconds',
  ],
  properties: {
    object: { const: 'usage' },
    period: {
      type: 'object',
      required: ['start', 'end'],
      properties: { start: dateTimeSchema, end: dateTimeSchema },
    },
    calls: { type: 'integer' },
    minutes: { type: 'integer' },
    average_duration_seconds: { type: 'integer' },
    outcomes: {
      type: 'object',
      required: ['resolved', 'escalated', 'abandoned', 'transferred', 'unknown'],
      additionalProperties: { type: 'integer' },
    },
    transfer_seconds: {
      type: 'integer',
      description:
        'Seconds of bridged transfers: the media gateway’s (a Media Streams call’s transfer, a warm transfer of a call with audio) and the SIP side’s (a transfer the far end would not take by REFER, bridged through the trunk); each at most TRANSFER_MAX_MINUTES. Not part of `minutes`, which are the agents’ own.',
    },
  },
};
