import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { buildEventEnvelope } from '../events/event-envelope.js';
import { startOnce } from '../temporal/start-once.js';
import {
  EVENT_FAN_OUT_WORKFLOW,
  type EventFanOutWorkflow,
  eventFanOutWorkflowId,
} from '../temporal/workflow-contracts.js';
import { campaignMoveRefusal, lockCampaign } from './campaign-moves.js';
import { countRecipients, presentCampaign } from './campaign-resource.js';

/**
 * Completes a running campaign with nothing pending or live, writing its campaign.completed
 * event once, and hands that event to delivery once (a repeated step finds the fan-out started).
 */
export async function completeCampaign(
  em: EntityManager,
  client: Client,
  input: { campaignId: string; at: Date; eventsTaskQueue: string },
): Promise<void> {
  const { campaignId, at } = input;
  const eventId = await em.transactional(async (tx) => {
    const campaign = await lockCampaign(tx, { id: campaignId });
    if (!campaign) return null;
    if (!campaignMoveRefusal(campaign, 'complete')) {
      const counts = await countRecipients(tx, campaignId);
      if (counts.pending + counts.in_progress > 0) return null;
      campaign.status = 'completed';
      campaign.endedAt = at;
      const { id, body } = buildEventEnvelope({
        type: 'campaign.completed',
        occurredAt: at,
        data: { object: presentCampaign(campaign, counts) },
      });
      await tx.getConnection().execute(
        `insert into events (id, workspace_id, type, api_version, call_id, body, created_at)
           values (?, ?, 'campaign.completed', 'v1', null, ?, ?)`,
        [id, campaign.workspace, body, at],
        'run',
        tx.getTransactionContext(),
      );
      campaign.completedEventId = id;
      await tx.flush();
    }
    return campaign.status === 'completed' ? campaign.completedEventId : null;
  });
  if (!eventId) return;
  await startOnce(
    client.workflow.start<EventFanOutWorkflow>(EVENT_FAN_OUT_WORKFLOW, {
      args: [{ eventId }],
      workflowId: eventFanOutWorkflowId(eventId),
      taskQueue: input.eventsTaskQueue,
      staticSummary: `campaign.completed of campaign ${campaignId}`,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    }),
  );
}
