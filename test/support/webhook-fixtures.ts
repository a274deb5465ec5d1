import { randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  Event,
  type EventType,
  WebhookEndpoint,
  type WebhookEndpointStatus,
} from '../../db/entities/index.js';
import { generateWebhookSecret } from '../../lib/webhooks/secret.js';

// Rows the webhook tests need without going through the API: endpoints, and events shaped
// like the ones the call workflow writes.

export async function insertEndpoint(
  em: EntityManager,
  input: { workspaceId: string; url: string; events: string[]; status?: WebhookEndpointStatus },
): Promise<WebhookEndpoint> {
  const endpoint = em.create(WebhookEndpoint, {
    id: randomUUID(),
    workspace: input.workspaceId,
    url: input.url,
    events: input.events,
    status: input.status ?? 'active',
    description: null,
    secret: generateWebhookSecret(),
    failingSince: null,
    disabledAt: null,
  });
  await em.flush();
  return endpoint;
}

/** An event row whose body is the JSON envelope the spec describes (a call event without a Call row). */
export async function insertEvent(
  em: EntityManager,
  input: { workspaceId: string; type: EventType; data?: Record<string, unknown> },
): Promise<Event> {
  const id = `evt_${randomBytes(16).toString('hex')}`;
  const createdAt = new Date();
  const body = JSON.stringify({
    id,
    object: 'event',
    type: input.type,
    api_version: 'v1',
    created_at: createdAt.toISOString(),
    data: input.data ?? {
      object: { object: 'call', id: randomUUID(), status: 'in_progress', metadata: { ü: 'ø' } },
    },
  });
  const event = em.create(Event, {
    id,
    workspace: input.workspaceId,
    type: input.type,
    apiVersion: 'v1',
    call: null,
    body,
    createdAt,
  });
  await em.flush();
  return event;
}
