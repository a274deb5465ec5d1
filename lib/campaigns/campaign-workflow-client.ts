import type { Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Campaign } from '../../db/entities/index.js';
import type { Settings } from '../settings.js';
import {
  cancelSignal,
  pauseSignal,
  recipientsAddedSignal,
  resumeSignal,
} from '../temporal/campaign-messages.js';
import { CampaignStatusKey, WorkspaceIdKey } from '../temporal/search-attributes.js';
import { taskQueues } from '../temporal/task-queues.js';
import {
  CAMPAIGN_WORKFLOW,
  type CampaignWorkflow,
  type CampaignWorkflowInput,
  campaignWorkflowId,
} from '../temporal/workflow-contracts.js';

// How the API starts a campaign's workflow and tells it of a change. The workflow id is the
// campaign's, so starting twice runs it once. A signal is sent with signal-with-start: a campaign
// whose workflow start was never confirmed gets it with its first pause, resume, cancel or added
// recipients.

export type CampaignChange = 'pause' | 'resume' | 'cancel' | 'recipientsAdded';

function startOptions(settings: Pick<Settings, 'taskQueuePrefix'>, campaign: Campaign) {
  const queues = taskQueues(settings);
  const input: CampaignWorkflowInput = {
    campaignId: campaign.id,
    workspaceId: campaign.workspace,
    eventsTaskQueue: queues.webhooks,
  };
  return {
    workflowId: campaignWorkflowId(campaign.id),
    taskQueue: queues.calls,
    args: [input] as [CampaignWorkflowInput],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    staticSummary: `campaign "${campaign.name}" by agent ${campaign.agent}`,
    staticDetails: [
      `**Campaign** \`${campaign.id}\`: ${campaign.name}`,
      '',
      `- workspace: \`${campaign.workspace}\``,
      `- agent: \`${campaign.agent}\``,
      `- at most ${campaign.maxConcurrentCalls} calls at a time, timezone ${campaign.timezone}`,
      '',
      'Its progress is in the `campaignProgress` query; its recipients are in PostgreSQL (GET /campaigns/{id}/recipients).',
    ].join('\n'),
    typedSearchAttributes: [
      { key: WorkspaceIdKey, value: campaign.workspace },
      { key: CampaignStatusKey, value: campaign.status },
    ],
  };
}

export async function startCampaignWorkflow(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  campaign: Campaign,
): Promise<void> {
  await client.workflow.start<CampaignWorkflow>(CAMPAIGN_WORKFLOW, startOptions(settings, campaign));
}

export async function signalCampaign(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  campaign: Campaign,
  change: CampaignChange,
): Promise<void> {
  const options = startOptions(settings, campaign);
  const common = { ...options, workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY };
  switch (change) {
    case 'pause':
      await client.workflow.signalWithStart<CampaignWorkflow, []>(CAMPAIGN_WORKFLOW, {
        ...common,
        signal: pauseSignal,
        signalArgs: [],
      });
      return;
    case 'resume':
      await client.workflow.signalWithStart<CampaignWorkflow, []>(CAMPAIGN_WORKFLOW, {
        ...common,
        signal: resumeSignal,
        signalArgs: [],
      });
      return;
    case 'cancel':
      await client.workflow.signalWithStart<CampaignWorkflow, []>(CAMPAIGN_WORKFLOW, {
        ...common,
        signal: cancelSignal,
        signalArgs: [],
      });
      return;
    case 'recipientsAdded':
      await client.workflow.signalWithStart<CampaignWorkflow, [{ count: number }]>(CAMPAIGN_WORKFLOW, {
        ...common,
        signal: recipientsAddedSignal,
        signalArgs: [{ count: 0 }],
      });
      return;
  }
}
