import { defineEntity, p } from '@mikro-orm/core';
import { Call } from './call.js';
import { Workspace } from './workspace.js';

export const CALL_EVENT_TYPES = [
  'call.started',
  'call.completed',
  'call.failed',
  'call.transferred',
] as const;
export type CallEventType = (typeof CALL_EVENT_TYPES)[number];
export const CAMPAIGN_EVENT_TYPES = ['campaign.completed'] as const;
export type CampaignEventType = (typeof CAMPAIGN_EVENT_TYPES)[number];
/** Every type a webhook endpoint may subscribe to. */
export const SUBSCRIBABLE_EVENT_TYPES = [...CALL_EVENT_TYPES, ...CAMPAIGN_EVENT_TYPES] as const;
export type EventType = CallEventType | CampaignEventType | 'webhook.test';

/**
 * An event as emitted, written once. `body` holds the exact JSON bytes that every delivery
 * attempt sends, so a retry repeats the same id and the same signed content.
 * (call, type) is unique: a call emits each of its event types at most once.
 */
const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'events',
  uniques: [{ properties: ['call', 'type'] }],
  indexes: [{ properties: ['workspace', 'createdAt'] }],
  properties: {
    id: p.string().length(40).primary(),
    workspace: () => p.manyToOne(Workspace).mapToPk().deleteRule('cascade'),
    type: p.string().length(40).$type<EventType>(),
    apiVersion: p.string().length(10).default('v1'),
    call: () => p.manyToOne(Call).mapToPk().nullable().deleteRule('cascade'),
    body: p.text(),
    createdAt: p.datetime(),
  },
});

export class Event extends EventSchema.class {}
EventSchema.setClass(Event);

export { EventSchema };
