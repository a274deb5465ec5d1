import type { Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Call } from '../../db/entities/index.js';
import type { CallWorkflowInput } from '../../workflows/call-workflow.js';
import { AgentIdKey, CallDirectionKey, CallStatusKey, WorkspaceIdKey } from '../search-attributes.js';
import { type Settings, taskQueues } from '../settings.js';

/** The call workflow's id: one per call, so the same call can never be dialed twice. */
export function callWorkflowId(callId: string): string {
  return `call-${callId}`;
}

/**
 * Starts the call's workflow, tagged with the search attributes operators filter on in the
 * Temporal Web UI. `answered` is true for calls that arrive connected (nothing to dial).
 */
export async function startCallWorkflow(
  client: Client,
  settings: Pick<Settings, 'taskQueuePrefix'>,
  call: Call,
  options: { answered?: boolean } = {},
): Promise<void> {
  const queues = taskQueues(settings);
  const input: CallWorkflowInput = {
    callId: call.id,
    workspaceId: call.workspace,
    agentId: call.agent ?? null,
    direction: call.direction,
    channel: call.channel,
    from: call.fromNumber ?? null,
    to: call.toNumber ?? null,
    ringTimeoutSeconds: call.ringTimeoutSeconds ?? 30,
    answered: options.answered ?? false,
    eventsTaskQueue: queues.webhooks,
  };
  await client.workflow.start('callWorkflow', {
    workflowId: callWorkflowId(call.id),
    taskQueue: queues.calls,
    args: [input],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    typedSearchAttributes: [
      { key: WorkspaceIdKey, value: call.workspace },
      { key: AgentIdKey, value: call.agent ?? '' },
      { key: CallStatusKey, value: call.status },
      { key: CallDirectionKey, value: call.direction },
    ],
  });
}
