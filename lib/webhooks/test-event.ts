import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { Event, type WebhookEndpoint } from '../../db/entities/index.js';
import { buildEventEnvelope } from '../events/event-envelope.js';
import type { Settings } from '../settings.js';
import { taskQueues } from '../temporal/task-queues.js';
import {
  WEBHOOK_DELIVERY_WORKFLOW,
  type WebhookDeliveryWorkflow,
  webhookDeliveryWorkflowId,
} from '../temporal/workflow-contracts.js';
import { webhookDeliveryMetadata } from '../temporal/workflow-metadata.js';
import { recordPendingDeliveries } from './deliveries.js';

// POST /webhooks/{id}/test: a webhook.test event (no call) delivered to that one endpoint only,
// by the same delivery workflow as every other event.

export const DEFAULT_TEST_MESSAGE = 'This is a test event from Service-Webhooks.';

export async function recordTestEvent(
  em: EntityManager,
  endpoint: WebhookEndpoint,
  message: string,
): Promise<{ event: Event; deliveryId: string }> {
  return em.transactional(async (tx) => {
    const createdAt = new Date();
    const { id, body } = buildEventEnvelope({
      type: 'webhook.test',
      occurredAt: createdAt,
      data: { message },
    });
    const event = tx.create(Event, {
      id,
      workspace: endpoint.workspace,
      type: 'webhook.test',
      apiVersion: 'v1',
      call: null,
      body,
      createdAt,
    });
    await tx.flush();
    const [deliveryId] = await recordPendingDeliveries(tx, event, [endpoint.id]);
    return { event, deliveryId: deliveryId! };
  });
}

/** Starts `webhook-delivery-<deliveryId>` on the webhooks queue. */
export async function startWebhookDelivery(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  deliveryId: string,
  /** What the Web UI shows for it: the event (a test event unless `eventType` says otherwise) and the endpoint. */
  about?: { eventId: string; endpointUrl: string; eventType?: string },
): Promise<void> {
  await client.workflow.start<WebhookDeliveryWorkflow>(WEBHOOK_DELIVERY_WORKFLOW, {
    workflowId: webhookDeliveryWorkflowId(deliveryId),
    taskQueue: taskQueues(settings).webhooks,
    args: [{ deliveryId }],
    ...(about && webhookDeliveryMetadata({ deliveryId, eventType: 'webhook.test', ...about })),
  });
}
