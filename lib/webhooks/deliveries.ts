import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { type Event, WebhookDelivery, WebhookEndpoint } from '../../db/entities/index.js';

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
 * One pending delivery per (event, endpoint), and the ids of all of them. Safe to repeat:
 * a row that exists already is kept, so a retried fan-out never delivers an event twice.
 */
export async function recordPendingDeliveries(
  em: EntityManager,
  event: Event,
  endpointIds: string[],
): Promise<string[]> {
  if (endpointIds.length === 0) return [];
  const now = new Date();
  await em
    .createQueryBuilder(WebhookDelivery)
    .insert(
      endpointIds.map((endpointId) => ({
        id: randomUUID(),
        workspace: event.workspace,
        endpoint: endpointId,
        event: event.id,
        eventType: event.type,
        status: 'pending' as const,
        attempts: 0,
        createdAt: now,
        updatedAt: now,
      })),
    )
    .onConflict(['event', 'endpoint'])
    .ignore()
    .execute();
  const rows = await em.find(
    WebhookDelivery,
    { event: event.id, endpoint: { $in: endpointIds } },
    { fields: ['id'], orderBy: { createdAt: 'asc', id: 'asc' } },
  );
  return rows.map((r) => r.id);
}
