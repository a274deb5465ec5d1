import { condition, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { CarrierSimulatorActivities, FarEndMessage } from '../activities/carrier-simulator.js';
import {
  type AgentSpeech,
  agentJoinedSignal,
  agentSpeechSignal,
  type CallerSpeech,
  type CarrierCallback,
  farEndReleasedSignal,
} from '../lib/temporal/call-messages.js';
import type { SimulatedCalleeInput, SimulatedCalleeResult } from '../lib/temporal/workflow-contracts.js';
import { FAR_END_CALLBACKS } from './activity-options.js';
import { type AnsweringMachine, calleeScript, callerScript, type PhoneMenu } from './callee-scripts.js';
import { speakingSeconds } from './speech-timing.js';

// The far end of a simulated call: the remote carrier and the person it rings. It runs on the
// carrier-simulator task queue and talks to the call workflow only through asynchronous
// callbacks (signals), as a real carrier's status and media callbacks would. Its waits are
// durable timers of simulated seconds times `timeScale`, so time-skipping tests skip them; a wait
// shorter than a server keeps a timer to (LOCAL_WAIT_MS) is slept in the local activity that
// calls back after it (see `after` for a release during such a wait).

/** Seconds the person pauses before answering what they heard. */
const THINKING_SECONDS = 1;
/** Seconds of silence after pick-up before the person speaks first. */
const SILENCE_BEFORE_SPEAKING_FIRST = 1.5;
/** Seconds a person being put through holds on without a word before they hang up. */
const HOLD_SECONDS = 60;
/** Simulated seconds between a dial and the first ring. */
const CONNECT_SECONDS = 0.5;

/**
 * Callbacks into the call as local activities: a marker each instead of a signal command and the
 * workflow task its completion wakes. A call that cannot be reached after these attempts is gone.
 */
const { callBack } = proxyLocalActivities<CarrierSimulatorActivities>(FAR_END_CALLBACKS);

/**
 * Waits shorter than this (wall-clock, after `timeScale`) are slept in the callback's local
 * activity: a Temporal server fires a timer no sooner than `history.timerProcessorMaxTimeShift`
 * (1 s by default) after it was started, so with SIM_TIME_SCALE=0.01 every wait of a few
 * milliseconds took a second. At SIM_TIME_SCALE=1 no wait is this short: nothing changes there.
 */
const LOCAL_WAIT_MS = 1000;

export async function simulatedCalleeWorkflow(
  input: SimulatedCalleeInput,
): Promise<SimulatedCalleeResult | undefined> {
  // A connected far end is someone who called in; otherwise the person the call rings.
  const script = input.connected ? callerScript(input.scenarioNumber) : calleeScript(input.scenarioNumber);
  let released = false;
  let joined: { opening: { index: number; text: string } | null } | undefined;
  const heardIndexes = new Set<number>();
  const toHear: AgentSpeech[] = [];
  const hear = (line: AgentSpeech) => {
    if (heardIndexes.has(line.index)) return; // a retried delivery of a line already heard
    heardIndexes.add(line.index);
    toHear.push(line);
    // The agent's last line, with its hang-up: heard, and the call is over.
    if (line.hangUp) released = true;
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
  const deliver = async (message: FarEndMessage, afterMs?: number) => {
    // A speaking far end's answer, lines and hang-up go to the media gateway as audio (the callback's
    // activity holds its stream); every other far end's inputs are as they were.
    const sent = input.audio ? { ...message, audio: input.audio } : message;
    const delivered = await callBack(afterMs === undefined ? sent : { ...sent, afterMs }).catch(() => false);
    if (!delivered) released = true;
  };
  const callbackOf = (callback: CarrierCallback): FarEndMessage => ({
    callWorkflowId: input.callWorkflowId,
    kind: 'callback',
    callback,
  });
  /**
   * Waits `seconds` of simulated time, then sends what `message` makes (it may read the clock).
   * False when a release cut the wait short and nothing was sent; a callback the call refused only
   * sets `released`. A wait slept locally cannot be cut short: a release that comes during it
   * waits in the server until this workflow task ends (after the callback), so the far end sends
   * that one message after the release, which the call, having released it, no longer acts on;
   * then it stops.
   */
  const after = async (seconds: number, message: () => FarEndMessage): Promise<boolean> => {
    const ms = Math.max(1, Math.round(seconds * 1000 * input.timeScale));
    if (ms < LOCAL_WAIT_MS) {
      if (released) return false;
      clock += seconds;
      await deliver(message(), ms);
      return true;
    }
    if (!(await pass(seconds))) return false;
    await deliver(message());
    return true;
  };

  if (!input.connected) {
    const dial = script.dial;
    if (dial.kind === 'busy' || dial.kind === 'not_connected') {
      await after(CONNECT_SECONDS, () => callbackOf({ type: dial.kind }));
      return;
    }
    if (!(await after(CONNECT_SECONDS, () => callbackOf({ type: 'ringing' })))) return;
    if (dial.kind === 'never_answers') {
      await condition(() => released);
      return;
    }
    if (dial.kind === 'declines') {
      await after(dial.afterRingingSeconds, () => callbackOf({ type: 'declined' }));
      return;
    }
  }

  let utterance = 0;
  // One wait per utterance (pause before it, then speaking it): a server's timers fire with some
  // latency, so fewer timers keep scaled-down calls fast.
  const say = async (text: string, pauseSeconds: number): Promise<boolean> => {
    const startedAtSeconds = clock + pauseSeconds;
    const spoke = await after(pauseSeconds + speakingSeconds(text), () => {
      const speech: CallerSpeech = { utterance: utterance++, text, startedAtSeconds, endedAtSeconds: clock };
      return { callWorkflowId: input.callWorkflowId, kind: 'speech', speech };
    });
    return spoke && !released;
  };
  /**
   * Waits until the agent says something or the call is released, at most `seconds` of simulated
   * time (of real time with `realTime`); false when the time ran out.
   */
  const heardWithin = (seconds: number, realTime = false) =>
    condition(
      () => toHear.length > 0 || released,
      Math.max(1, Math.round(seconds * 1000 * (realTime ? 1 : input.timeScale))),
    );

  let spokeFirst = false;
  if (!input.connected) {
    // Rings 1 to 3 simulated seconds (the workflow's seeded random is deterministic on replay).
    const ringSeconds = 1 + Math.floor(Math.random() * 3);
    // A machine or a menu speaks from pick-up; a person mostly waits to hear who calls.
    const speaking =
      script.machine !== undefined || script.menu !== undefined || script.pickUpWords !== undefined;
    if (!(await after(ringSeconds, () => callbackOf({ type: 'answered', speaking })))) return;
    clock = 0;
    if (script.machine) return answeringMachine(script.machine);
    if (script.menu && !(await phoneMenu(script.menu))) return;
    if (script.pickUpWords !== undefined) {
      if (!(await say(script.pickUpWords, 0))) return;
      spokeFirst = true;
    }
  }

  // A speaking person who called in connects their stream first (far ends with `audio` only).
  if (input.connected && input.audio) await deliver({ callWorkflowId: input.callWorkflowId, kind: 'attach' });
  await condition(() => joined !== undefined || released);
  // Without an opening line the person speaks first, unless they already did at pick-up.
  if (!released && !joined?.opening && !spokeFirst) {
    if (!(await say(script.firstWords, SILENCE_BEFORE_SPEAKING_FIRST))) return;
  }
  let linesHeard = 0;

  /**
   * Scenario 3001: the greeting from pick-up, the beep, then it records what it hears until the
   * agent hangs up or its time is up (it hangs up then). What was said over the greeting is not
   * on the recording. A machine with audio records for real seconds: its greeting and beep are
   * real audio, played once synthesised, so a scaled window (counted from when they were queued)
   * could close before the beep was even heard on a loaded machine.
   */
  async function answeringMachine(machine: AnsweringMachine): Promise<SimulatedCalleeResult> {
    const recorded: string[] = [];
    if (!(await say(machine.greeting, 0))) return { recorded };
    if (machine.beepSeconds !== null) {
      if (!(await after(machine.beepSeconds, () => callbackOf({ type: 'beep' })))) return { recorded };
    }
    toHear.splice(0);
    const recordingEnds = clock + machine.recordsSeconds;
    while (!released && clock < recordingEnds) {
      const before = clock;
      const heard = await heardWithin(recordingEnds - clock, input.audio !== undefined);
      clock = heard
        ? before + toHear.reduce((sum, line) => sum + speakingSeconds(line.text), 0)
        : recordingEnds;
      recorded.push(...toHear.splice(0).map((line) => line.text));
    }
    if (!released) await deliver(callbackOf({ type: 'hung_up', atSeconds: Math.round(clock) }));
    return { recorded };
  }

  /**
   * Scenario 3002: the menu from pick-up; words instead of a key get the prompt again; a key puts
   * the call through to the person (true); no key within `noKeySeconds` of the prompt: it hangs up.
   */
  async function phoneMenu(menu: PhoneMenu): Promise<boolean> {
    if (!(await say(menu.prompt, 0))) return false;
    const giveUpAt = clock + menu.noKeySeconds;
    while (!released && clock < giveUpAt) {
      const before = clock;
      if (!(await heardWithin(giveUpAt - clock))) break;
      const lines = toHear.splice(0);
      clock = before + lines.reduce((sum, line) => sum + speakingSeconds(line.text), 0);
      if (lines.some((line) => line.digits)) {
        // Put through: the person answers as if the agent had just joined.
        joined = { opening: null };
        return true;
      }
      if (!released && !(await say(menu.again, THINKING_SECONDS))) return false;
    }
    if (!released) await deliver(callbackOf({ type: 'hung_up', atSeconds: Math.round(clock) }));
    return false;
  }

  for (;;) {
    await condition(() => toHear.length > 0 || released);
    if (released) return;
    const line = toHear.shift()!;
    const reply = script.replies[linesHeard++];
    if (reply === undefined && script.holdsOn) {
      // On hold (one wait a line, as the hang-up's): until handed over, or a minute without a word.
      let heard = line;
      for (;;) {
        const holdingSince = Date.now();
        const more = await heardWithin(speakingSeconds(heard.text) + HOLD_SECONDS);
        clock += (Date.now() - holdingSince) / (1000 * input.timeScale);
        if (released) return;
        if (!more) break;
        heard = toHear.shift()!;
      }
      await deliver(callbackOf({ type: 'hung_up', atSeconds: Math.round(clock) }));
      return;
    }
    if (reply === undefined) {
      // Heard the agent out, then hangs up.
      await after(speakingSeconds(line.text), () =>
        callbackOf({ type: 'hung_up', atSeconds: Math.round(clock) }),
      );
      return;
    }
    if (!(await say(reply, speakingSeconds(line.text) + THINKING_SECONDS))) return;
  }
}
