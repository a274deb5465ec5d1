import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { CallerSpeech, CarrierCallback } from '../lib/temporal/call-messages.js';
import {
  callerSpeechSignal,
  carrierCallbackSignal,
  farEndReleasedSignal,
} from '../lib/temporal/call-messages.js';

// The simulated far end's one step that touches the world: its callbacks into the call workflow.
// Run as a local activity (workflows/simulated-callee-workflow.ts, patch `lean-far-end-1`), a
// callback is one marker in the far end's history instead of a signal command, its completion
// event and the workflow task that completion wakes.

export type FarEndMessage =
  | { callWorkflowId: string; kind: 'callback'; callback: CarrierCallback }
  | { callWorkflowId: string; kind: 'speech'; speech: CallerSpeech };

export function createCarrierSimulatorActivities() {
  return {
    /**
     * Signals the call; false when the call is gone (it already ended), as a real carrier's 404.
     * With `afterMs` (far ends since patch `lean-far-end-2`) it first waits that long here, for a
     * pause too short for a durable timer, and then does not call back (false) when the far end
     * was released meanwhile: the release is in the far end's history, though its workflow task,
     * held open by this wait, has not seen it yet.
     */
    async callBack(input: FarEndMessage & { afterMs?: number }): Promise<boolean> {
      const context = Context.current();
      if (input.afterMs !== undefined) {
        await sleep(input.afterMs, undefined, { signal: context.cancellationSignal });
        if (await releasedMeanwhile()) return false;
      }
      const handle = context.client.workflow.getHandle(input.callWorkflowId);
      try {
        if (input.kind === 'callback') await handle.signal(carrierCallbackSignal, input.callback);
        else await handle.signal(callerSpeechSignal, input.speech);
        return true;
      } catch (error) {
        if (error instanceof WorkflowNotFoundError) return false;
        throw error;
      }
    },
  };
}

/** Whether the far end running this activity has been sent `farEndReleased`. */
async function releasedMeanwhile(): Promise<boolean> {
  const context = Context.current();
  const { workflowId, runId } = context.info.workflowExecution!;
  const history = await context.client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []).some(
    (event) => event.workflowExecutionSignaledEventAttributes?.signalName === farEndReleasedSignal.name,
  );
}

export type CarrierSimulatorActivities = ReturnType<typeof createCarrierSimulatorActivities>;
