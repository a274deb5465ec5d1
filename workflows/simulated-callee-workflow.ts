import {
  condition,
  getExternalWorkflowHandle,
  patched,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { CarrierSimulatorActivities } from '../activities/carrier-simulator.js';
import {
  agentJoinedSignal,
  agentSpeechSignal,
  type CallerSpeech,
  type CarrierCallback,
  callerSpeechSignal,
  carrierCallbackSignal,
  farEndReleasedSignal,
} from '../lib/temporal/call-messages.js';
import type { SimulatedCalleeInput } from '../lib/temporal/workflow-contracts.js';
import { calleeScript, callerScript } from './callee-scripts.js';
import { speakingSeconds } from './speech-timing.js';

// The far end of a simulated call: the remote carrier and the person it rings. It runs on the
// carrier-simulator task queue and talks to the call workflow only through asynchronous
// callbacks (signals), as a real carrier's status and media callbacks would. Its waits are
// durable timers of simulated seconds times `timeScale`, so time-skipping tests skip them.

/** Seconds the person pauses before answering what they heard. */
const THINKING_SECONDS = 1;
/** Seconds of silence after pick-up before the person speaks first. */
const SILENCE_BEFORE_SPEAKING_FIRST = 1.5;
/** Simulated seconds between a dial and the first ring. */
const CONNECT_SECONDS = 0.5;

/**
 * Callbacks into the call as local activities (far ends started since patch `lean-far-end-1`): a
 * marker each instead of a signal command and the workflow task its completion wakes. A call that
 * cannot be reached after these attempts is taken as gone, as a refused signal was before.
 */
const { callBack } = proxyLocalActivities<CarrierSimulatorActivities>({
  startToCloseTimeout: '10 seconds',
  localRetryThreshold: '1 second',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumAttempts: 5 },
});

/** Patch id of the callbacks as local activities (older histories replay their signal commands). */
const LEAN_FAR_END = 'lean-far-end-1';

export async function simulatedCalleeWorkflow(input: SimulatedCalleeInput): Promise<void> {
  const lean = patched(LEAN_FAR_END);
  // A connected far end is someone who called in; otherwise the person the call rings.
  const script = input.connected ? callerScript(input.scenarioNumber) : calleeScript(input.scenarioNumber);
  const callWorkflow = getExternalWorkflowHandle(input.callWorkflowId);
  let released = false;
  let joined: { opening: { index: number; text: string } | null } | undefined;
  const heardIndexes = new Set<number>();
  const toHear: { index: number; text: string }[] = [];
  const hear = (line: { index: number; text: string }) => {
    if (heardIndexes.has(line.index)) return; // a retried delivery of a line already heard
    heardIndexes.add(line.index);
    toHear.push(line);
  };
  setHandler(farEndReleasedSignal, () => {
    released = true;
  });
  setHandler(agentJoinedSignal, (signal) => {
    joined ??= signal;
    if (signal.opening) hear(signal.opening);
  });
  setHandler(agentSpeechSignal, hear);

  /** Simulated time since pick-up. */
  let clock = 0;
  /** Waits `seconds` of simulated time; false when the call was released meanwhile. */
  const pass = async (seconds: number): Promise<boolean> => {
    const wokeEarly = await condition(
      () => released,
      Math.max(1, Math.round(seconds * 1000 * input.timeScale)),
    );
    clock += seconds;
    return !wokeEarly;
  };
  // A call that already ended refuses signals: the far end then has nothing left to do.
  const notify = async (callback: CarrierCallback) => {
    const delivered = lean
      ? await callBack({ callWorkflowId: input.callWorkflowId, kind: 'callback', callback }).catch(
          () => false,
        )
      : await callWorkflow.signal(carrierCallbackSignal, callback).then(
          () => true,
          () => false,
        );
    if (!delivered) released = true;
  };

  if (!input.connected) {
    const dial = script.dial;
    if (!(await pass(CONNECT_SECONDS))) return;
    if (dial.kind === 'busy' || dial.kind === 'not_connected') return notify({ type: dial.kind });
    await notify({ type: 'ringing' });
    if (dial.kind === 'never_answers') {
      await condition(() => released);
      return;
    }
    if (dial.kind === 'declines') {
      if (await pass(dial.afterRingingSeconds)) await notify({ type: 'declined' });
      return;
    }
    // Rings 1 to 3 simulated seconds (the workflow's seeded random is deterministic on replay).
    if (!(await pass(1 + Math.floor(Math.random() * 3)))) return;
    clock = 0;
    await notify({ type: 'answered' });
  }

  await condition(() => joined !== undefined || released);
  let utterance = 0;
  // One durable timer per utterance (pause before it, then speaking it): a server's timers fire
  // with some latency, so fewer timers keep scaled-down calls fast.
  const say = async (text: string, pauseSeconds: number): Promise<boolean> => {
    const startedAtSeconds = clock + pauseSeconds;
    if (!(await pass(pauseSeconds + speakingSeconds(text)))) return false;
    const speech: CallerSpeech = { utterance: utterance++, text, startedAtSeconds, endedAtSeconds: clock };
    const delivered = lean
      ? await callBack({ callWorkflowId: input.callWorkflowId, kind: 'speech', speech }).catch(() => false)
      : await callWorkflow.signal(callerSpeechSignal, speech).then(
          () => true,
          () => false,
        );
    if (!delivered) released = true;
    return !released;
  };
  if (!released && !joined?.opening) {
    if (!(await say(script.firstWords, SILENCE_BEFORE_SPEAKING_FIRST))) return;
  }
  let linesHeard = 0;
  for (;;) {
    await condition(() => toHear.length > 0 || released);
    if (released) return;
    const line = toHear.shift()!;
    const reply = script.replies[linesHeard++];
    if (reply === undefined) {
      // Heard the agent out, then hangs up.
      if (!(await pass(speakingSeconds(line.text)))) return;
      await notify({ type: 'hung_up', atSeconds: Math.round(clock) });
      return;
    }
    if (!(await say(reply, speakingSeconds(line.text) + THINKING_SECONDS))) return;
  }
}
