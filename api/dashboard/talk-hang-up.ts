import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { carrierCallbackSignal } from '../../lib/temporal/call-messages.js';
import { callWorkflowId } from '../../lib/temporal/workflow-contracts.js';

// A Talk call whose microphone never reached the media gateway (the page's socket failed, or the
// page closed before its stream started) has no gateway to tell the call workflow that the person
// left: the API tells it, as the gateway would (`hung_up`), so the call ends `caller_hangup` at
// once instead of by its silence timeout. A workflow already over needs nothing.

export async function hangUpTalkCall(temporal: Client, call: { id: string; startedAt: Date }): Promise<void> {
  try {
    await temporal.workflow.getHandle(callWorkflowId(call.id)).signal(carrierCallbackSignal, {
      type: 'hung_up',
      atSeconds: (Date.now() - call.startedAt.getTime()) / 1000,
    });
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}
