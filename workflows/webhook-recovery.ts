import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  continueAsNew,
  ParentClosePolicy,
  proxyActivities,
  sleep,
  startChild,
  WorkflowIdReusePolicy,
} from '@temporalio/workflow';
import type { createWebhookActivities } from '../activities/webhooks.js';
import {
  type WebhookRecoveryInput,
  type WebhookRecoveryResult,
  type WebhookRecoveryWorkflow,
  webhookDeliveryWorkflowId,
} from '../lib/temporal/workflow-contracts.js';
import { webhookDeliveryMetadata } from '../lib/temporal/workflow-metadata.js';
import type { RecoveredDelivery } from '../lib/webhooks/recovery.js';
import {
  RECOVERY_BATCH_SIZE,
  RECOVERY_BATCHES_PER_RUN,
  RECOVERY_SEND_INTERVAL_MS,
} from '../lib/webhooks/retry-schedule.js';
import { WEBHOOK_BOOKKEEPING } from './activity-options.js';
import { webhookDeliveryWorkflow } from './webhook-delivery.js';

// One recovery (POST /webhooks/{id}/recover, id `webhook-recovery-<recoveryId>`): the events fixed
// when it was requested are sent again, oldest first, one every RECOVERY_SEND_INTERVAL_MS. Each
// gets a new delivery (origin `recover`) run by its own delivery workflow with the usual retries;
// the recovery does not wait for them. Events are taken RECOVERY_BATCH_SIZE at a time; before each
// batch the endpoint is checked, so pausing, disabling or deleting it stops the recovery within a
// second. The workflow continues as new every RECOVERY_BATCHES_PER_RUN batches.

const { takeRecoveryEvents, completeRecovery } =
  proxyActivities<ReturnType<typeof createWebhookActivities>>(WEBHOOK_BOOKKEEPING);

export async function webhookRecoveryWorkflow(input: WebhookRecoveryInput): Promise<WebhookRecoveryResult> {
  const batchesPerRun = input.batchesPerRun ?? RECOVERY_BATCHES_PER_RUN;
  let position = input.position ?? 0;
  let eventsSent = 0;
  for (let batch = 1; ; batch++) {
    const step = await takeRecoveryEvents({
      recoveryId: input.recoveryId,
      position,
      limit: RECOVERY_BATCH_SIZE,
    });
    for (const [i, delivery] of step.deliveries.entries()) {
      if (i > 0) await sleep(RECOVERY_SEND_INTERVAL_MS);
      await startDelivery(delivery, step.endpointUrl);
    }
    eventsSent += step.deliveries.length;
    position = step.position;
    if (step.state === 'stopped') return { status: 'stopped', eventsSent };
    if (step.state === 'done') {
      await completeRecovery({ recoveryId: input.recoveryId });
      return { status: 'completed', eventsSent };
    }
    await sleep(RECOVERY_SEND_INTERVAL_MS);
    if (batch >= batchesPerRun) {
      return continueAsNew<WebhookRecoveryWorkflow>({ ...input, position });
    }
  }
}

/** Starts `webhook-delivery-<deliveryId>` unless it ran already (a retried batch). */
async function startDelivery(delivery: RecoveredDelivery, endpointUrl: string | null): Promise<void> {
  const { deliveryId } = delivery;
  try {
    await startChild(webhookDeliveryWorkflow, {
      ...webhookDeliveryMetadata({ ...delivery, ...(endpointUrl ? { endpointUrl } : {}) }),
      workflowId: webhookDeliveryWorkflowId(deliveryId),
      args: [{ deliveryId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}
