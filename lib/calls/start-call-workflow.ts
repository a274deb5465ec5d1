import type { Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Call } from '../../db/entities/index.js';
import type { Settings } from '../settings.js';
import { callSearchAttributes } from '../temporal/search-attributes.js';
import { taskQueues } from '../temporal/task-queues.js';
import {
  CALL_WORKFLOW,
  type CallWorkflow,
  type CallWorkflowInput,
  callWorkflowId,
  campaignWorkflowId,
} from '../temporal/workflow-contracts.js';
import { callWorkflowMetadata } from '../temporal/workflow-metadata.js';
import { DEFAULT_RING_TIMEOUT_SECONDS } from './admit-outbound-call.js';

/**
 * Starts the call's workflow, tagged with the search attributes operators filter on in the
 * Temporal Web UI. `answered` is true for calls that arrive connected (nothing to dial);
 * `expired` ends a call that waited queued too long without dialing it.
 */
export async function startCallWorkflow(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  call: Call,
  options: { answered?: boolean; expired?: boolean } = {},
): Promise<void> {
  const input = callWorkflowInputOf(call, settings, options);
  await client.workflow.start<CallWorkflow>(CALL_WORKFLOW, {
    workflowId: callWorkflowId(call.id),
    taskQueue: taskQueues(settings).calls,
    args: [input],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    // Who is called by which agent, in the Web UI's lists (Temporal user metadata).
    ...callWorkflowMetadata(input),
    typedSearchAttributes: callSearchAttributes(input, call.status),
  });
}

/** What the call's workflow is started with (also as a test run's child, workflows/test-run-workflow.ts). */
export function callWorkflowInputOf(
  call: Call,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  options: { answered?: boolean; expired?: boolean } = {},
): CallWorkflowInput {
  const queues = taskQueues(settings);
  return {
    callId: call.id,
    workspaceId: call.workspace,
    agentId: call.agent ?? null,
    direction: call.direction,
    channel: call.channel,
    from: call.fromNumber ?? null,
    to: call.toNumber ?? null,
    ringTimeoutSeconds: call.ringTimeoutSeconds ?? DEFAULT_RING_TIMEOUT_SECONDS,
    answered: options.answered ?? false,
    ...(options.expired ? { expired: true } : {}),
    eventsTaskQueue: queues.webhooks,
    toolsTaskQueue: queues.tools,
    // A campaign's call tells the campaign when it ends (workflows/call-workflow.ts).
    ...(call.campaign ? { campaignWorkflowId: campaignWorkflowId(call.campaign) } : {}),
    ...voicemailDetectionOf(call),
  };
}

/** An outbound phone call detects answering machines unless its agent turned it off (workflows/call/screen.ts). */
export function detectsAnsweringMachines(call: Call): boolean {
  return (
    call.direction === 'outbound' &&
    call.channel === 'phone' &&
    !call.testCaller &&
    Boolean(call.agentSnapshot.voicemail?.detect)
  );
}

function voicemailDetectionOf(call: Call): Pick<CallWorkflowInput, 'voicemail'> {
  const settings = call.agentSnapshot.voicemail;
  return settings && detectsAnsweringMachines(call) ? { voicemail: { action: settings.action } } : {};
}
