import { randomBytes } from 'node:crypto';
import type { EventType } from '../../db/entities/index.js';

// The event envelope of the spec (Events, Envelope), built in one place for call events, test
// events and the bench. The body is serialised once, stored as it will be sent, and signed byte
// for byte at delivery.

export const EVENT_API_VERSION = 'v1';

/** `evt_` and 32 hex digits; kept across retries of the same event, so receivers can drop duplicates. */
function newEventId(): string {
  return `evt_${randomBytes(16).toString('hex')}`;
}

export interface EventEnvelope {
  id: string;
  object: 'event';
  type: EventType;
  api_version: typeof EVENT_API_VERSION;
  created_at: string;
  data: Record<string, unknown>;
}

/** A new event: its id and the JSON bytes of its envelope. */
export function buildEventEnvelope(input: {
  type: EventType;
  occurredAt: Date;
  data: Record<string, unknown>;
}): {
  id: string;
  body: string;
} {
  const id = newEventId();
  const envelope: EventEnvelope = {
    id,
    object: 'event',
    type: input.type,
    api_version: EVENT_API_VERSION,
    created_at: input.occurredAt.toISOString(),
    data: input.data,
  };
  return { id, body: JSON.stringify(envelope) };
}
