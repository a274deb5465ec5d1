import { setTimeout as sleep } from 'node:timers/promises';
import type { EndOfTurnRule } from '../lib/audio/pause-verdict.js';
import { TurnDetector } from '../lib/audio/turn-detector.js';
import { SileroVoiceActivity } from '../lib/audio/voice-activity.js';
import { SpeechServerEndOfTurn } from '../lib/speech/end-of-turn.js';
import { localSpeechDoubtsBelow } from '../lib/speech/local-doubt.js';
import { OpenAiSpeechToText } from '../lib/speech/openai-speech-to-text.js';
import { OpenAiTextToSpeech } from '../lib/speech/openai-text-to-speech.js';
import { endOfTurnRule } from '../media/end-of-turn-rule.js';
import { HeardAhead } from '../media/heard-ahead.js';
import { hearTurn } from '../media/turn-transcription.js';
import { startLocalSpeechServer } from '../scripts/local-speech-server.js';
import { oneCount } from './bench-counts.js';
import { BACKCHANNELS, INTERRUPTIONS, overTheAgent, percentile, rate } from './over-the-agent.js';
import { labelledUtterances, type Utterance } from './turn-utterances.js';

// Where the caller's turn ends (docs/voice.md, "End of turn by a model"), measured on 100 labelled
// caller utterances made with the local voice over the phone line (bench/turn-utterances.ts: 40
// complete sentences, 30 said in two parts with a pause mid-phrase, 20 numbers read out in groups
// after the agent asked for the number; and 10 afterthoughts, a whole sentence, a pause and more,
// reported apart).
// Each goes through the gateway's turn detector (lib/audio/turn-detector.ts: Silero VAD, and with
// VOICE_TURN_DETECTION=model the local speech server's Smart Turn v3.2 and the pause's words,
// media/end-of-turn-rule.ts) frame by frame in real time, three at once (three callers;
// BENCH_TURN_AT_ONCE=1 hears one caller at a time, a quiet machine's single call), with its
// pauses transcribed by the local Whisper as the gateway's user turns do, so the models' own time
// counts. Reported: end_of_turn_p50_ms (the end of a complete utterance's speech → its turn's end)
// and false_cut_rate (cut and digit utterances whose turn ended in a pause, before the rest) with
// cut_at (the words heard at each such pause), for the gateway's rule (`model`), the model without
// the words (`model_voice_only`) and the silence rule (VOICE_ENDPOINTING_MS 600);
// BENCH_TURN_MODES=model,… measures only those.
// Then 25 more over a talking agent (bench/over-the-agent.ts, through the gateway's user-turn and
// interruption stages): false_interruption_rate (15 backchannels that stopped the agent) and how
// soon 10 real interruptions stopped it.
//
//   npm run bench -- turn-taking      targets: end of turn p50 ≤ 300 ms, false cuts ≤ 5 %,
//                                     false interruptions ≤ 10 %

/** BENCH_TURN_MODES: the rules measured (all three unless told). */
const MODES = (['model', 'model_voice_only', 'silence'] as const).filter(
  (mode) => !process.env.BENCH_TURN_MODES || process.env.BENCH_TURN_MODES.split(',').includes(mode),
);
/** BENCH_TURN_AT_ONCE: utterances heard at once (callers sharing the machine), in real time; 3 unless told. */
const AT_ONCE = oneCount('BENCH_TURN_AT_ONCE', '3');

/**
 * Runs one utterance through a detector in real time; when its turns ended (ms on its clock). Its
 * pauses are transcribed ahead as the gateway's user turns do (media/user-turns.ts), for the rule's words.
 */
async function turnEnds(
  { audio, asked }: Utterance,
  rule: ((heardAhead: HeardAhead, asked: string) => EndOfTurnRule) | undefined,
  realTime: boolean,
) {
  const heardAhead = new HeardAhead((pause, signal) =>
    hearTurn(stt, 'en-US', pause.audio, { signal, scored: true }),
  );
  const detector = new TurnDetector({
    vad: await SileroVoiceActivity.load(),
    endpointingMs: 600,
    ...(rule ? { endOfTurn: rule(heardAhead, asked) } : {}),
  });
  const ends: number[] = [];
  /** The words heard at each pause, by the pause's end (ms). */
  const words = new Map<number, string>();
  const started = performance.now();
  for (let start = 0; start + 160 <= audio.length; start += 160) {
    const atMs = start / 8;
    for (const event of await detector.push(audio.subarray(start, start + 160), atMs)) {
      if (event.type === 'speech_paused' && rule) {
        heardAhead.begin(event).text.then(
          (text) => words.set(event.endedAtMs, text),
          () => {},
        );
      }
      if (event.type === 'speech_resumed' || event.type === 'speech_started') heardAhead.drop();
      if (event.type === 'turn_ended') {
        heardAhead.drop();
        ends.push(atMs + 20);
      }
    }
    if (realTime) {
      const wait = started + atMs + 20 - performance.now();
      if (wait > 0) await sleep(wait);
    } else {
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return { ends, words };
}

const server = await startLocalSpeechServer({ log: (line) => process.stderr.write(`${line}\n`) });
const endpoint = (model: string) => ({ url: server.url, apiKey: undefined, model, timeoutMs: 30_000 });
const stt = new OpenAiSpeechToText(endpoint('whisper-1'));
try {
  const tts = new OpenAiTextToSpeech(endpoint('tts-1'));
  const { utterances, spoken, unconfirmedCuts } = await labelledUtterances(tts, stt);
  const model = new SpeechServerEndOfTurn(endpoint('whisper-1'));
  let failures = 0;
  // The gateway's settings with the local speech: its doubt in English words (lib/speech/local-doubt.ts).
  const doubtBelow = localSpeechDoubtsBelow('en-US');
  const settings = { model, language: 'en-US', pauseMs: 200, maxMs: 2000, failed: () => void failures++ };
  const rules = {
    // The gateway's rule: the model, and the pause's words.
    model: (heardAhead: HeardAhead, asked: string) =>
      endOfTurnRule({ ...settings, heardAhead, agentLine: () => asked, doubtBelow }),
    // The model alone, for comparison.
    model_voice_only: (heardAhead: HeardAhead, _asked: string) => {
      const { words: _, ...voiceOnly } = endOfTurnRule({ ...settings, heardAhead });
      return voiceOnly;
    },
    silence: undefined,
  };
  const over = await overTheAgent(async (text) => (await spoken(text)).samples, stt);
  for (const mode of MODES) {
    failures = 0;
    const endOfTurn: number[] = [];
    let cuts = 0;
    let continued = 0;
    /** Afterthoughts: those whose turn ended at the pause after the whole first sentence. */
    const afterthoughts = { ended: 0, of: 0 };
    /** The words heard at the pauses that ended a turn too soon ("" when none came). */
    const cutAt: string[] = [];
    const judge = (heard: Utterance, { ends, words }: Awaited<ReturnType<typeof turnEnds>>) => {
      const lastPart = heard.parts.at(-1)!;
      if (heard.kind === 'complete') {
        const end = ends.find((at) => at >= lastPart.endMs);
        if (end !== undefined) endOfTurn.push(end - lastPart.endMs);
      } else if (heard.kind === 'afterthought') {
        afterthoughts.of++;
        if (ends.some((at) => at < lastPart.startMs)) afterthoughts.ended++;
      } else {
        continued++;
        const cut = ends.find((at) => at < lastPart.startMs);
        if (cut === undefined) return;
        cuts++;
        const pause = heard.parts.findLast((part) => part.endMs < cut);
        const said = [...words].findLast(
          ([endedAtMs]) => endedAtMs <= cut && endedAtMs >= (pause?.startMs ?? 0),
        );
        cutAt.push(said?.[1] ?? '');
      }
    };
    for (let i = 0; i < utterances.length; i += AT_ONCE) {
      const batch = utterances.slice(i, i + AT_ONCE);
      const heard = await Promise.all(batch.map((one) => turnEnds(one, rules[mode], mode !== 'silence')));
      for (const [j, one] of batch.entries()) judge(one, heard[j]);
    }
    console.log(
      JSON.stringify({
        bench: 'turn-taking',
        turn_detection: mode,
        at_once: AT_ONCE,
        utterances: utterances.length + BACKCHANNELS.length + INTERRUPTIONS.length,
        end_of_turn_p50_ms: percentile(endOfTurn, 50),
        end_of_turn_p95_ms: percentile(endOfTurn, 95),
        false_cut_rate: rate(cuts, continued),
        ...(mode !== 'silence' ? { cut_at: cutAt } : {}),
        // No target: a whole sentence, then a pause, may end the turn (bench/turn-utterances.ts).
        afterthoughts_ended_at_pause_rate: rate(afterthoughts.ended, afterthoughts.of),
        unconfirmed_cuts: unconfirmedCuts,
        // The same for both: speech over the agent is judged by its words, not by the turn's end.
        ...over,
        ...(mode !== 'silence' ? { model_failures: failures } : {}),
      }),
    );
  }
} finally {
  await server.stop();
}
