import { setTimeout as sleep } from 'node:timers/promises';
import { TurnDetector } from '../lib/audio/turn-detector.js';
import { SileroVoiceActivity } from '../lib/audio/voice-activity.js';
import { createLogger } from '../lib/logger.js';
import type { SpeechToText } from '../lib/speech/speech-ports.js';
import type { AgentCut } from '../media/agent-speech.js';
import { UserTurns } from '../media/user-turns.js';
import type { WorkflowOutbox } from '../media/workflow-outbox.js';

// The caller speaking while the agent talks (the turn-taking bench's second half, bench/turn-taking.ts):
// each utterance goes, frame by frame in real time, through the gateway's own stages for it (the
// turn detector with Silero, then media/user-turns.ts and its interruptions, which transcribe the
// first words with the local speech server's Whisper), with an agent that talks throughout. What is
// counted is whether the agent was stopped (its voice's bargeIn):
//   - backchannels ("mhm", "yeah", "okay", "I see"): stopping the agent is a false interruption;
//   - interruptions ("wait, that is not what I asked"): the agent must stop, within the spec's 1.5 s
//     of the speech's start.
// Nothing else of a call is there: the turn's line goes nowhere (no turn loop, an outbox that drops
// what it is sent), the agent's audio is not played.

export const BACKCHANNELS = [
  'Mhm.',
  'Yeah.',
  'Okay.',
  'Right.',
  'Uh-huh.',
  'Yes.',
  'I see.',
  'Sure.',
  'Got it.',
  'Yeah, okay.',
  'Mm.',
  'Yep.',
  'Alright.',
  'Okay, yes.',
  'Hmm.',
];

export const INTERRUPTIONS = [
  'Wait, that is not what I asked.',
  'Sorry, can I stop you there?',
  'No, no, the other address please.',
  'Hold on, I need to change that.',
  'Stop, that is the wrong date.',
  'Excuse me, I did not order that.',
  'Actually, I would rather come on Monday.',
  'Sorry, what was the price again?',
  'No, my name is spelled differently.',
  'Can you speak a little slower?',
];

export interface OverTheAgent {
  backchannels: number;
  false_interruption_rate: number | null;
  /** The backchannels that stopped the agent, as written. */
  stopped_by: string[];
  interruptions: number;
  /** Interruptions that never stopped the agent. */
  interruptions_missed: number;
  /** The interruption's speech starting → the agent stopped. */
  interruption_stop_p50_ms: number;
  interruption_stop_max_ms: number;
}

const LEAD_MS = 400;
const TAIL_MS = 2000;
const AT_ONCE = 3;

/** Runs `speech` (8 kHz, the phone line's) over a talking agent; when the agent was stopped, ms after the speech began, or null. */
async function stoppedAfter(speech: Int16Array, stt: SpeechToText): Promise<number | null> {
  const audio = new Int16Array(((LEAD_MS + TAIL_MS) * 8000) / 1000 + speech.length);
  audio.set(speech, LEAD_MS * 8);
  let talking = true;
  let stoppedAtMs: number | null = null;
  let clockMs = 0;
  const detector = new TurnDetector({ vad: await SileroVoiceActivity.load(), endpointingMs: 600 });
  const turns = new UserTurns({
    callId: 'bench',
    stt,
    language: 'en-US',
    voice: {
      speaking: () => talking,
      bargeIn: (): AgentCut | null => {
        if (!talking) return null;
        talking = false;
        stoppedAtMs = clockMs;
        return { atMs: clockMs, speech: null };
      },
      // The agent talks throughout: no answer of its waits for the person.
      hold: () => {},
      dropHeld: () => {},
      takeDropped: () => null,
    },
    loop: null,
    // The turn's line is not this bench's business.
    outbox: { send: async () => {} } as unknown as WorkflowOutbox,
    startedAt: Date.now(),
    preemptiveGeneration: false,
    ending: () => false,
    callBack: async () => {},
    speechSoFar: () => detector.speechSoFar(),
    logger: createLogger('error', { write: () => {} }),
  });
  const started = performance.now();
  for (let start = 0; start + 160 <= audio.length; start += 160) {
    clockMs = start / 8;
    for (const event of await detector.push(audio.subarray(start, start + 160), clockMs))
      turns.onTurnEvent(event);
    const wait = started + clockMs + 20 - performance.now();
    if (wait > 0) await sleep(wait);
  }
  await turns.transcribing;
  turns.stop();
  return stoppedAtMs === null ? null : stoppedAtMs - LEAD_MS;
}

/** `count` of `of` as a rate, to a tenth of a percent (the turn-taking benches' rule); null of none. */
export const rate = (count: number, of: number): number | null =>
  of ? Math.round((count / of) * 1000) / 1000 : null;

/** The p-th percentile of `values`, rounded to a whole ms (the turn-taking bench's own rule). */
export const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN);
};

/** Every backchannel and interruption, `spoken` as the caller says it over the phone line. */
export async function overTheAgent(
  spoken: (text: string) => Promise<Int16Array>,
  stt: SpeechToText,
): Promise<OverTheAgent> {
  const lines = [
    ...BACKCHANNELS.map((text) => ({ text, backchannel: true })),
    ...INTERRUPTIONS.map((text) => ({ text, backchannel: false })),
  ];
  const heard: { text: string; backchannel: boolean; stoppedAfter: number | null }[] = [];
  for (let i = 0; i < lines.length; i += AT_ONCE) {
    const batch = lines.slice(i, i + AT_ONCE);
    const audio = await Promise.all(batch.map((line) => spoken(line.text)));
    const stopped = await Promise.all(audio.map((samples) => stoppedAfter(samples, stt)));
    for (const [j, line] of batch.entries()) heard.push({ ...line, stoppedAfter: stopped[j] });
  }
  const backchannels = heard.filter((one) => one.backchannel);
  const interruptions = heard.filter((one) => !one.backchannel);
  const stops = interruptions.flatMap((one) => (one.stoppedAfter === null ? [] : [one.stoppedAfter]));
  const stoppedBy = backchannels.filter((one) => one.stoppedAfter !== null).map((one) => one.text);
  return {
    backchannels: backchannels.length,
    false_interruption_rate: rate(stoppedBy.length, backchannels.length),
    stopped_by: stoppedBy,
    interruptions: interruptions.length,
    interruptions_missed: interruptions.length - stops.length,
    interruption_stop_p50_ms: percentile(stops, 50),
    interruption_stop_max_ms: Math.max(...stops),
  };
}
