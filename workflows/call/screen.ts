import { condition, patched } from '@temporalio/workflow';
import type { AnsweredBy } from '../../db/entities/index.js';
import type { CallerSpeech } from '../../lib/temporal/call-messages.js';
import { screening, voicemail, voicemailInTask } from './activity-proxies.js';
import { agentFinishedAt, type CallState, type Ending } from './call-state.js';
import { failedForGood, release } from './steps.js';

// Answering machines (telephony spec section 6): the first seconds after an outbound phone call
// is answered decide who answered, before the agent says anything.
//
//   answered ─┬─ silent at pick-up ─────────────────────────────────── human (a person waits to hear who calls)
//             ├─ speaking ─ first words within 3.7 s ─ judged ───────── human, machine, unknown (a phone menu)
//             ├─ speaking ─ still speaking at 3.7 s ────────────────── machine (a long unbroken greeting)
//             └─ the carrier cannot tell ───────────────────────────── unknown (the agent goes on)
//
// The opening line waits only while the far end speaks. On a machine the agent hangs up, or waits
// for the beep (or the greeting's end and 1 s of silence) and leaves its message; either way the
// call ends `voicemail`.

/**
 * How long after the answer the far end is heard before the decision: the spec's 4 s less 300 ms
 * for judging and storing it (a local activity and a workflow task; tens of milliseconds
 * on a real server, a few hundred on the time-skipping one).
 */
const DECISION_MS = 3_700;
/** A beep that never comes: the message follows the greeting's end and this much silence. */
const SILENCE_AFTER_GREETING_MS = 1_000;
/** A greeting that never ends: the message is left this long after the decision all the same. */
const LONGEST_GREETING_MS = 30_000;
/**
 * Patch: a call with audio hears its greeting's end from the gateway (`quiet`): a line's arrival
 * says a turn ended, not that the far end fell silent, so the text rule (a line, then 1 s without
 * another) left messages over a greeting's next sentence.
 */
export const GREETING_END_FROM_AUDIO = 'greeting-end-from-audio';
/**
 * Patch: the message is left by an activity, not a local one. A local activity's effect (the line
 * written, the message played) outlived a workflow task that failed, and the replay, which had
 * meanwhile heard the greeting's late words, wrote them and left the message a second time.
 */
export const VOICEMAIL_RECORDED = 'voicemail-recorded';

/** `end_reason` of a call an answering machine took. */
export const VOICEMAIL = 'voicemail';

const farEndGone = (call: CallState) => call.hungUp !== null || call.mediaLost || call.mediaEnded;

/**
 * Who answered, when pick-up tells: a far end silent at it is a person; a carrier that cannot say
 * leaves it `unknown`. Null: the far end speaks, and its first seconds decide (`screen`). Known at
 * pick-up, it is stored with the answer (no step of its own).
 */
export function answeredByAtPickUp(call: CallState): AnsweredBy | null {
  if (call.answeredSpeaking === null) return 'unknown';
  return call.answeredSpeaking ? null : 'human';
}

/** A far end speaking at pick-up: who answered, stored on the call; what it said meanwhile stays in `call.heard`. */
export async function screen(call: CallState): Promise<AnsweredBy> {
  // The limit counts from the answer, not from here: storing the answer and `call.started` came first.
  const left = Math.max(1, DECISION_MS - (Date.now() - call.answeredAtMs));
  await condition(() => call.heard.length > 0 || farEndGone(call), left);
  const first = call.heard[0];
  if (first) {
    return screening.judgeAnswer({
      callId: call.callId,
      firstWords: { text: first.text, seconds: first.endedAtSeconds - first.startedAtSeconds },
    });
  }
  // Still speaking when the decision is due: a long unbroken greeting. Gone without a word: unknown.
  return screening.judgeAnswer({ callId: call.callId, answeredBy: farEndGone(call) ? 'unknown' : 'machine' });
}

/**
 * A machine answered: its greeting goes into the transcript; the agent hangs up at once, or leaves
 * its message after the beep and hangs up.
 */
export async function onAnsweringMachine(
  call: CallState,
  action: 'hang_up' | 'leave_message',
  recordGreeting: (lines: CallerSpeech[]) => Promise<void>,
): Promise<Ending> {
  await recordGreeting(call.heard.splice(0));
  if (action === 'hang_up' || farEndGone(call)) {
    if (!farEndGone(call)) await release(call, 'hang_up');
    return { endReason: VOICEMAIL, durationSeconds: call.spokenSoFar() };
  }
  await untilTheMachineRecords(call, recordGreeting);
  if (farEndGone(call)) return { endReason: VOICEMAIL, durationSeconds: call.spokenSoFar() };
  let line: Awaited<ReturnType<typeof voicemail.leaveVoicemail>>;
  try {
    line = await (patched(VOICEMAIL_RECORDED) ? voicemail : voicemailInTask).leaveVoicemail({
      callId: call.callId,
      index: call.nextIndex,
      offsetSeconds: call.spokenSoFar(),
    });
  } catch (error) {
    // A message that cannot be left (the voice side failed past its retries): the machine is
    // hung up on all the same; it was a machine.
    if (!failedForGood(error)) throw error;
    await release(call, 'hang_up');
    return { endReason: VOICEMAIL, durationSeconds: call.spokenSoFar() };
  }
  call.lastAgentLine = line;
  call.nextIndex = line.index + 1;
  call.progress.transcriptLines = call.nextIndex;
  return { endReason: VOICEMAIL, durationSeconds: agentFinishedAt(line) };
}

/** Until the beep, or the greeting's end and a second of silence (each line of it is kept), or the far end is gone. */
async function untilTheMachineRecords(
  call: CallState,
  recordGreeting: (lines: CallerSpeech[]) => Promise<void>,
): Promise<void> {
  if (call.media && patched(GREETING_END_FROM_AUDIO))
    return untilTheAudioMachineRecords(call, recordGreeting);
  // A greeting heard whole has ended; one cut off by the decision is still going.
  let greetingOver = call.nextIndex > 0;
  const giveUpAt = Date.now() + LONGEST_GREETING_MS;
  while (!call.beeped && !farEndGone(call)) {
    const left = giveUpAt - Date.now();
    if (left <= 0) return;
    const woke = await condition(
      () => call.beeped || farEndGone(call) || call.heard.length > 0,
      greetingOver ? Math.min(SILENCE_AFTER_GREETING_MS, left) : left,
    );
    if (!woke) return; // a second of silence after the greeting (or the longest greeting)
    if (call.heard.length > 0) {
      await recordGreeting(call.heard.splice(0));
      greetingOver = true;
    }
  }
}

/**
 * The same for a call with audio: until the beep, or the greeting's end as the gateway hears it
 * (`quiet`: 1 s of silence after speech), or the far end is gone, or the longest greeting; each
 * line of the greeting is kept as it comes (the gateway sends its words before either callback).
 */
async function untilTheAudioMachineRecords(
  call: CallState,
  recordGreeting: (lines: CallerSpeech[]) => Promise<void>,
): Promise<void> {
  const giveUpAt = Date.now() + LONGEST_GREETING_MS;
  const recording = () => call.beeped || call.greetingOver || farEndGone(call);
  while (!recording()) {
    const left = giveUpAt - Date.now();
    if (left <= 0) break;
    await condition(() => recording() || call.heard.length > 0, left);
    if (call.heard.length > 0) await recordGreeting(call.heard.splice(0));
  }
  if (call.heard.length > 0) await recordGreeting(call.heard.splice(0));
}
