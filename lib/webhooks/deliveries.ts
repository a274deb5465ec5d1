import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  type Event,
  WebhookDelivery,
  type WebhookDeliveryOrigin,
  WebhookEndpoint,
} from '../../db/entities/index.js';

/** Active endpoints of the event's workspace subscribed to its type (webhook.test has none). */
export async function subscribedEndpointIds(em: EntityManager, event: Event): Promise<string[]> {
  if (event.type === 'webhook.test') return [];
  const endpoints = await em.find(
    WebhookEndpoint,
    { workspace: event.workspace, status: 'active', events: { $contains: [event.type] } },
    { fields: ['id'], orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return endpoints.map((e) => e.id);
}

/**
 * The event's own pending delivery to each endpoint (origin `event`, or `test` for webhook.test),
 * and the ids of all of them. Safe to repeat: a row that exists already is kept (the partial
 * unique index on (event, endpoint) of deliveries that are not resends), so a retried fan-out
 * never delivers an event twice.
 */
export async function recordPendingDeliveries(
  em: EntityManager,
  event: Event,
  endpointIds: string[],
): Promise<string[]> {
  if (endpointIds.length === 0) return [];
  const origin: WebhookDeliveryOrigin = event.type === 'webhook.test' ? 'test' : 'event';
  const now = new Date().toISOString();
  await em.execute(
    `insert into webhook_deliveries
       (id, workspace_id, endpoint_id, event_id, event_type, status, origin, attempts, created_at, updated_at)
     values ${endpointIds.map(() => `(?, ?, ?, ?, ?, 'pending', ?, 0, ?::timestamptz, ?::timestamptz)`).join(', ')}
     on conflict (event_id, endpoint_id) where resent_from_id is null do nothing`,
    endpointIds.flatMap((endpointId) => [
      randomUUID(),
      event.workspace,
      endpointId,
      event.id,
      event.type,
      origin,
      now,
      now,
    ]),
    'run',
  );
  const rows = await em.find(
    WebhookDelivery,
    { event: event.id, endpoint: { $in: endpointIds }, resentFrom: null },
    { fields: ['id'], orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return rows.map((r) => r.id);
}

/**
 * A new pending delivery of `original`'s event to the same endpoint (POST …/resend), linked to it.
 * Its created_at is later than every earlier delivery of the event to the endpoint, so "the last
 * delivery" of an event (what recover looks at) is always the newest row.
 */
export async function recordResend(em: EntityManager, original: WebhookDelivery): Promise<WebhookDelivery> {
  const createdAt = await nextCreatedAt(em, original.event, original.endpoint);
  const delivery = em.create(WebhookDelivery, {
    id: randomUUID(),
    workspace: original.workspace,
    endpoint: original.endpoint,
    event: original.event,
    eventType: original.eventType,
    status: 'pending',
    origin: 'resend',
    resentFrom: original.id,
    recovery: null,
    attempts: 0,
    createdAt,
    updatedAt: createdAt,
  });
  await em.flush();
  return delivery;
}

/** Now, or 1 ms after the newest delivery of the event to the endpoint if that is not earlier. */
async function nextCreatedAt(em: EntityManager, eventId: string, endpointId: string): Promise<Date> {
  const [row] = await em.execute<{ newest: Date | string | null }[]>(
    'select max(created_at) as newest from webhook_deliveries where event_id = ? and endpoint_id = ?',
    [eventId, endpointId],
    'all',
  );
  const now = Date.now();
  const newest = row?.newest ? new Date(row.newest).getTime() : 0;
  return new Date(Math.max(now, newest + 1));
}
