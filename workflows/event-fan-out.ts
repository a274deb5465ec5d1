import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { ParentClosePolicy, proxyActivities, startChild, WorkflowIdReusePolicy } from '@temporalio/workflow';
import type { createWebhookActivities } from '../activities/webhooks.js';
import { type EventFanOutInput, webhookDeliveryWorkflowId } from '../lib/temporal/workflow-contracts.js';
import { webhookDeliveryMetadata } from '../lib/temporal/workflow-metadata.js';
import { WEBHOOK_BOOKKEEPING } from './activity-options.js';
import { webhookDeliveryWorkflow } from './webhook-delivery.js';

// Started by the call workflow for every event it writes (id `event-fanout-<eventId>`):
// records a delivery per subscribed active endpoint and starts one delivery workflow each,
// then ends. The deliveries run on their own, so a slow receiver holds up nobody else.

const { recordEventDeliveries } =
  proxyActivities<ReturnType<typeof createWebhookActivities>>(WEBHOOK_BOOKKEEPING);

export async function eventFanOutWorkflow(input: EventFanOutInput): Promise<{ deliveries: number }> {
  const { deliveryIds, eventType } = await recordEventDeliveries({ eventId: input.eventId });
  await Promise.all(deliveryIds.map((deliveryId) => startDelivery(deliveryId, input.eventId, eventType)));
  return { deliveries: deliveryIds.length };
}

/** Starts `webhook-delivery-<deliveryId>` unless it ran already. */
async function startDelivery(
  deliveryId: string,
  eventId: string,
  eventType: string | undefined,
): Promise<void> {
  try {
    await startChild(webhookDeliveryWorkflow, {
      ...webhookDeliveryMetadata({ deliveryId, eventId, eventType }),
      workflowId: webhookDeliveryWorkflowId(deliveryId),
      args: [{ deliveryId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
