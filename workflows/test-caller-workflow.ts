import {
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { CarrierSimulatorActivities } from '../activities/carrier-simulator.js';
import type { TestCallerActivities } from '../activities/test-caller.js';
import {
  type AgentSpeech,
  agentJoinedSignal,
  agentSpeechSignal,
  type CallerSpeech,
  farEndReleasedSignal,
} from '../lib/temporal/call-messages.js';
import { testCallerHangUpSignal } from '../lib/temporal/test-run-messages.js';
import type { TestCallerInput, TestCallerResult } from '../lib/temporal/workflow-contracts.js';
import type { CallerTurn } from '../lib/test-runs/caller-model.js';
import { FAR_END_CALLBACKS, TEST_CALLER_LINE } from './activity-options.js';
import { speakingSeconds } from './speech-timing.js';

// The far end of a test run's call: a caller the language model plays (post-call spec section 2).
// It stands where the simulator's far end stands (same workflow id, same carrier signals from the
// call workflow) and answers each turn of the agent with the model's next line, text only, until
// the model calls end_call, `maxTurns` lines are said, the agent hangs up, or the run is canceled.

const { callBack } = proxyLocalActivities<CarrierSimulatorActivities>(FAR_END_CALLBACKS);

/** A caller who hears nothing for this long hangs up (the call's own silence timeout is 10 min). */
const SILENT_AGENT_SECONDS = 5 * 60;

export async function testCallerWorkflow(input: TestCallerInput): Promise<TestCallerResult> {
  const { testCallerLine } = proxyActivities<TestCallerActivities>({
    ...TEST_CALLER_LINE,
    taskQueue: input.modelTaskQueue,
  });
  const pickedUpAt = workflowInfo().startTime.getTime();
  const conversation: CallerTurn[] = [];
  const heardIndexes = new Set<number>();
  let joined = false;
  let unanswered = 0;
  let released = false;
  let hangUpNow = false;
  let lines = 0;
  const hear = (line: AgentSpeech) => {
    if (heardIndexes.has(line.index)) return; // a retried delivery of a line already heard
    heardIndexes.add(line.index);
    conversation.push({ role: 'agent', text: line.text });
    unanswered++;
    if (line.hangUp) released = true;
  };
  setHandler(agentJoinedSignal, (signal) => {
    joined = true;
    if (signal.opening) hear(signal.opening);
  });
  setHandler(agentSpeechSignal, hear);
  setHandler(farEndReleasedSignal, () => {
    released = true;
  });
  setHandler(testCallerHangUpSignal, () => {
    hangUpNow = true;
  });

  /** False when the call is gone (it already ended). */
  const deliver = async (message: Parameters<typeof callBack>[0]) => callBack(message).catch(() => false);
  const hangUp = async (failure: string | null): Promise<TestCallerResult> => {
    const atSeconds = Math.round((Date.now() - pickedUpAt) / 1000);
    await deliver({
      callWorkflowId: input.callWorkflowId,
      kind: 'callback',
      callback: { type: 'hung_up', atSeconds },
    });
    return { lines, endedBy: 'caller', failure };
  };

  for (;;) {
    // The caller answers what the agent said; when the agent listens first, the caller speaks first.
    const turn = await condition(
      () => released || hangUpNow || (joined && (unanswered > 0 || conversation.length === 0)),
      SILENT_AGENT_SECONDS * 1000,
    );
    if (released) return { lines, endedBy: 'agent', failure: null };
    if (hangUpNow || !turn || lines >= input.maxTurns) return hangUp(null);
    unanswered = 0;
    let next: Awaited<ReturnType<typeof testCallerLine>>;
    try {
      next = await testCallerLine({ callerPrompt: input.callerPrompt, conversation: [...conversation] });
    } catch (error) {
      const cause = (error as { cause?: Error }).cause ?? error;
      return hangUp(`the simulated caller's language model failed: ${(cause as Error).message}`);
    }
    if (released) return { lines, endedBy: 'agent', failure: null };
    if (next.text) {
      const endedAtSeconds = (Date.now() - pickedUpAt) / 1000;
      const speech: CallerSpeech = {
        utterance: lines++,
        text: next.text,
        // Typed, not spoken: the line is taken to have been said at a normal pace, ending now.
        startedAtSeconds: Math.max(0, endedAtSeconds - speakingSeconds(next.text)),
        endedAtSeconds,
      };
      conversation.push({ role: 'caller', text: next.text });
      if (!(await deliver({ callWorkflowId: input.callWorkflowId, kind: 'speech', speech }))) {
        return { lines, endedBy: 'agent', failure: null };
      }
    }
    if (next.hangUp) return hangUp(null);
  }
}
