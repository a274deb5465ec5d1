import { condition, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { CarrierSimulatorActivities } from '../activities/carrier-simulator.js';
import {
  agentJoinedSignal,
  agentSpeechSignal,
  browserCallerHangUpSignal,
  browserCallerSaysSignal,
  type CallerSpeech,
  type CarrierCallback,
  farEndReleasedSignal,
} from '../lib/temporal/call-messages.js';
import type { BrowserCallerInput } from '../lib/temporal/workflow-contracts.js';
import { FAR_END_CALLBACKS } from './activity-options.js';
import { speakingSeconds } from './speech-timing.js';

// The far end of a dashboard test-panel call: the person in the browser. It stands where the
// simulated far end stands (same workflow id, same carrier signals from the call workflow), but
// the caller's lines and the hang-up come from the dashboard as signals instead of a script.
// The agent's lines reach the browser from the call's transcript, which the call workflow writes
// before playing each line, so this workflow only has to pass the person's side on.

const { callBack } = proxyLocalActivities<CarrierSimulatorActivities>(FAR_END_CALLBACKS);

export async function browserCallerWorkflow(input: BrowserCallerInput): Promise<void> {
  const pickedUpAt = workflowInfo().startTime.getTime();
  const secondsSincePickUp = () => (Date.now() - pickedUpAt) / 1000;
  let released = false;
  let hungUp = false;
  const toSay: string[] = [];
  let linesHeard = 0;
  setHandler(farEndReleasedSignal, () => {
    released = true;
  });
  // The agent's lines are already in the transcript; the far end only needs to know they came.
  setHandler(agentJoinedSignal, () => {});
  setHandler(agentSpeechSignal, () => {});
  setHandler(browserCallerSaysSignal, ({ line, text }) => {
    // A resent line (the browser retried) is said once.
    if (line < linesHeard + toSay.length) return;
    toSay.push(text);
  });
  setHandler(browserCallerHangUpSignal, () => {
    hungUp = true;
  });

  const deliver = async (
    message: { kind: 'callback'; callback: CarrierCallback } | { kind: 'speech'; speech: CallerSpeech },
  ) => {
    const delivered = await callBack({ callWorkflowId: input.callWorkflowId, ...message }).catch(() => false);
    // A call that already ended refuses callbacks: nothing left to do here.
    if (!delivered) released = true;
  };

  for (;;) {
    const active = await condition(
      () => released || hungUp || toSay.length > 0,
      input.abandonAfterSeconds * 1000,
    );
    if (released) return;
    if (!active || (hungUp && toSay.length === 0)) {
      await deliver({
        callback: { type: 'hung_up', atSeconds: Math.round(secondsSincePickUp()) },
        kind: 'callback',
      });
      return;
    }
    const text = toSay.shift()!;
    const endedAtSeconds = secondsSincePickUp();
    const speech: CallerSpeech = {
      utterance: linesHeard++,
      text,
      // Typed, not spoken: the line is taken to have been said at a normal pace, ending now.
      startedAtSeconds: Math.max(0, endedAtSeconds - speakingSeconds(text)),
      endedAtSeconds,
    };
    await deliver({ kind: 'speech', speech });
  }
}
