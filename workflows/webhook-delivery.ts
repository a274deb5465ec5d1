import { proxyActivities, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { createWebhookActivities } from '../activities/webhooks.js';
import type { WebhookDeliveryInput, WebhookDeliveryResult } from '../lib/temporal/workflow-contracts.js';
import { busyPauseMs, MAX_DELIVERY_ATTEMPTS, retryDelayAfter } from '../lib/webhooks/retry-schedule.js';
import { WEBHOOK_DELIVERY_ATTEMPT } from './activity-options.js';

// One event to one endpoint: up to MAX_DELIVERY_ATTEMPTS attempts on the schedule of
// lib/webhooks/retry-schedule.ts. The activity logs every attempt on the WebhookDelivery row.

const { attemptWebhookDelivery } =
  proxyActivities<ReturnType<typeof createWebhookActivities>>(WEBHOOK_DELIVERY_ATTEMPT);

export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<WebhookDeliveryResult> {
  let attempt = 1;
  let timesBusy = 0;
  while (attempt <= MAX_DELIVERY_ATTEMPTS) {
    const { outcome, endpointUrl } = await attemptWebhookDelivery({ deliveryId: input.deliveryId, attempt });
    // Shown on the workflow's page in the Web UI: the last attempt, where to, and how it went.
    if (endpointUrl)
      setCurrentDetails(`attempt ${attempt} of ${MAX_DELIVERY_ATTEMPTS} to ${endpointUrl}: ${outcome}`);
    if (outcome === 'busy') {
      await sleep(busyPauseMs(++timesBusy));
      continue;
    }
    if (outcome !== 'retry') return { outcome, attempts: attempt };
    await sleep(retryDelayAfter(attempt) ?? 0);
    attempt++;
  }
  return { outcome: 'failed' as const, attempts: MAX_DELIVERY_ATTEMPTS };
}
