import { setTimeout as sleep } from 'node:timers/promises';
import alawmulaw from 'alawmulaw';
import { resample } from '../lib/audio/resample.js';
import { type EndOfTurnRule, TurnDetector } from '../lib/audio/turn-detector.js';
import { SileroVoiceActivity } from '../lib/audio/voice-activity.js';
import { SpeechServerEndOfTurn } from '../lib/speech/end-of-turn.js';
import { OpenAiSpeechToText } from '../lib/speech/openai-speech-to-text.js';
import { OpenAiTextToSpeech } from '../lib/speech/openai-text-to-speech.js';
import { endOfTurnRule } from '../media/end-of-turn-rule.js';
import { HeardAhead } from '../media/heard-ahead.js';
import { transcribeTurn } from '../media/turn-transcription.js';
import { startLocalSpeechServer } from '../scripts/local-speech-server.js';
import { oneCount } from './bench-counts.js';
import { BACKCHANNELS, INTERRUPTIONS, overTheAgent, percentile } from './over-the-agent.js';

// Where the caller's turn ends (docs/voice.md, "End of turn by a model"), measured on a labelled
// set of caller utterances made with the local voice (Piper joe) and carried over the phone line
// (8 kHz μ-law):
//   - complete: 40 whole sentences;
//   - cut: 30 sentences said in two parts with a 700–900 ms pause between them, the first ending
//     mid-phrase (the whole line made once and cut there, so its first part keeps the voice of a
//     sentence that goes on);
//   - digits: 20 phone and customer numbers read out in groups with 800 ms pauses (made alike).
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

const COMPLETE = [
  'I would like to book a table for two on Friday.',
  'Can you tell me when the store opens tomorrow?',
  'My order has not arrived yet.',
  'I need to change my delivery address.',
  'Please cancel my appointment on Monday.',
  'Is there a pharmacy near the station?',
  'Thank you, that is everything I needed.',
  'I would like to speak to someone about my bill.',
  'The heating in my apartment is broken.',
  'Could you send me the invoice again?',
  'We are three adults and two children.',
  'I lost my card yesterday evening.',
  'What is the price of a single ticket?',
  'My flight was cancelled this morning.',
  'I want to renew my subscription.',
  'Yes, Tuesday at ten works for me.',
  'No, I do not need a receipt.',
  'Can I pay with a credit card?',
  'The package was left at the wrong door.',
  'I am calling about the job advertisement.',
  'How long does the repair usually take?',
  'Please call me back after five.',
  'I have a question about my insurance.',
  'The meeting has been moved to Thursday.',
  'Do you deliver on Sundays?',
  'I would like a window seat, please.',
  'My name is Kari Nordmann.',
  'I live on the second floor.',
  'The code did not work when I tried it.',
  'That sounds good, let us do that.',
  'I need a taxi to the airport at six.',
  'Can you repeat the last part?',
  'We would like to order two pizzas.',
  'The water bill seems too high this month.',
  'I forgot my password again.',
  'Is the museum open on public holidays?',
  'I would like to return these shoes.',
  'The train was forty minutes late.',
  'Could you check if my payment went through?',
  'Goodbye, and have a nice day.',
];

const CUT: [string, string][] = [
  ['I would like to book a table,', 'for two on Friday.'],
  ['Can you tell me when,', 'the store opens tomorrow?'],
  ['I need to change,', 'my delivery address.'],
  ['Please cancel my appointment,', 'on Monday morning.'],
  ['Is there a pharmacy,', 'near the central station?'],
  ['I would like to speak,', 'to someone about my bill.'],
  ['The heating in my,', 'apartment is broken.'],
  ['Could you send me,', 'the invoice again?'],
  ['We are three adults,', 'and two children.'],
  ['What is the price,', 'of a single ticket?'],
  ['My flight to Berlin,', 'was cancelled this morning.'],
  ['I want to renew,', 'my subscription for a year.'],
  ['The package was left,', 'at the wrong door.'],
  ['I am calling about,', 'the job advertisement.'],
  ['How long does,', 'the repair usually take?'],
  ['I have a question,', 'about my insurance.'],
  ['The meeting has been moved,', 'to Thursday afternoon.'],
  ['I would like a seat,', 'by the window, please.'],
  ['My name is,', 'Kari Nordmann.'],
  ['The code did not,', 'work when I tried it.'],
  ['I need a taxi,', 'to the airport at six.'],
  ['We would like to order,', 'two large pizzas.'],
  ['The water bill seems,', 'too high this month.'],
  ['I forgot,', 'my password again.'],
  ['Is the museum open,', 'on public holidays?'],
  ['I would like to return,', 'these shoes.'],
  ['The train was,', 'forty minutes late.'],
  ['Could you check if,', 'my payment went through?'],
  ['I was wondering if,', 'you have any rooms left.'],
  ['Can I bring,', 'my dog along?'],
];

const DIGITS: string[][] = [
  ['My number is nine one two,', 'three four five,', 'six seven eight.'],
  ['It is four seven,', 'nine nine,', 'one two three four.'],
  ['The customer number is one two,', 'three four,', 'five six.'],
  ['Call me on four one five,', 'five five five,', 'zero one nine two.'],
  ['The reference is eight eight,', 'two zero,', 'four one.'],
  ['My card ends in one,', 'nine,', 'seven three.'],
  ['The code is three three,', 'six,', 'nine nine.'],
  ['It is nine two,', 'four four,', 'eight seven.'],
  ['The order number is five,', 'one one,', 'two nine.'],
  ['My postcode is zero one,', 'five zero.'],
  ['The number is two two two,', 'three three three.'],
  ['Try six one,', 'seven seven,', 'zero zero.'],
  ['It starts with four,', 'then eight nine,', 'then one one.'],
  ['My member number is seven,', 'four two,', 'six.'],
  ['The booking is one nine,', 'eight four.'],
  ['Dial nine nine,', 'four five,', 'six one.'],
  ['The account is three,', 'zero zero,', 'seven seven.'],
  ['It is five five,', 'nine one,', 'three two.'],
  ['My phone is four eight,', 'two two,', 'one zero, five.'],
  ['The ticket number is six six,', 'one four.'],
];

interface Part {
  samples: Int16Array;
}
interface Utterance {
  kind: 'complete' | 'cut' | 'digits';
  audio: Int16Array;
  /** Where each part's speech begins and ends in `audio`, ms. */
  parts: { startMs: number; endMs: number }[];
}

const LEAD_MS = 400;
/** After the last part: past VOICE_TURN_MAX_MS, so every turn ends within it. */
const TAIL_MS = 2400;
/** BENCH_TURN_MODES: the rules measured (all three unless told). */
const MODES = (['model', 'model_voice_only', 'silence'] as const).filter(
  (mode) => !process.env.BENCH_TURN_MODES || process.env.BENCH_TURN_MODES.split(',').includes(mode),
);
/** BENCH_TURN_AT_ONCE: utterances heard at once (callers sharing the machine), in real time; 3 unless told. */
const AT_ONCE = oneCount('BENCH_TURN_AT_ONCE', '3');

/** The sound's extent in 8 kHz samples: from the first to the last sample above a whisper. */
function trimmed(samples: Int16Array): Int16Array {
  let first = 0;
  let last = samples.length - 1;
  while (first < last && Math.abs(samples[first]) < 300) first++;
  while (last > first && Math.abs(samples[last]) < 300) last--;
  return samples.slice(first, last + 1);
}

function utterance(kind: Utterance['kind'], parts: Part[], pausesMs: number[]): Utterance {
  const ms = (samples: number) => (samples / 8000) * 1000;
  const pieces: Int16Array[] = [new Int16Array(LEAD_MS * 8)];
  const spans: Utterance['parts'] = [];
  let at = LEAD_MS * 8;
  parts.forEach((part, i) => {
    spans.push({ startMs: ms(at), endMs: ms(at + part.samples.length) });
    pieces.push(part.samples);
    at += part.samples.length;
    const pause = i < parts.length - 1 ? pausesMs[i] : TAIL_MS;
    pieces.push(new Int16Array(pause * 8));
    at += pause * 8;
  });
  const audio = new Int16Array(at);
  let offset = 0;
  for (const piece of pieces) {
    audio.set(piece, offset);
    offset += piece.length;
  }
  return { kind, audio, parts: spans };
}

/**
 * Runs one utterance through a detector in real time; when its turns ended (ms on its clock). Its
 * pauses are transcribed ahead as the gateway's user turns do (media/user-turns.ts), for the rule's words.
 */
async function turnEnds(
  audio: Int16Array,
  rule: ((heardAhead: HeardAhead) => EndOfTurnRule) | undefined,
  realTime: boolean,
) {
  const heardAhead = new HeardAhead((pause, signal) => transcribeTurn(stt, 'en-US', pause.audio, signal));
  const detector = new TurnDetector({
    vad: await SileroVoiceActivity.load(),
    endpointingMs: 600,
    ...(rule ? { endOfTurn: rule(heardAhead) } : {}),
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
  const spoken = async (text: string): Promise<Part> => {
    const made = await tts.synthesize(text, { voice: 'joe' });
    const phone = alawmulaw.mulaw.decode(
      alawmulaw.mulaw.encode(resample(made.samples, made.sampleRate, 8000)),
    );
    return { samples: trimmed(phone) };
  };
  /**
   * The parts as one sentence said with pauses: the whole line is made once (so its first part keeps
   * the rising, going-on voice of a sentence that is not over) and cut where each part ends, found
   * from the part's own length and moved to the quietest 20 ms within 120 ms of it.
   */
  const saidWithPauses = async (parts: string[]): Promise<Part[]> => {
    const whole = (await spoken(parts.join(' ').replace(/,\s/g, ' '))).samples;
    const cuts: number[] = [];
    let at = 0;
    for (const part of parts.slice(0, -1)) {
      at += (await spoken(part)).samples.length;
      let best = Math.min(at, whole.length - 160);
      let quietest = Number.POSITIVE_INFINITY;
      for (let c = Math.max(160, at - 960); c <= Math.min(whole.length - 160, at + 960); c += 40) {
        let energy = 0;
        for (let k = c - 80; k < c + 80; k++) energy += Math.abs(whole[k]);
        if (energy < quietest) [quietest, best] = [energy, c];
      }
      cuts.push(best);
      at = best;
    }
    const edges = [0, ...cuts, whole.length];
    return edges.slice(0, -1).map((start, i) => ({ samples: whole.slice(start, edges[i + 1]) }));
  };
  const utterances: Utterance[] = [];
  for (const line of COMPLETE) utterances.push(utterance('complete', [await spoken(line)], []));
  for (const [i, parts] of CUT.entries()) {
    utterances.push(utterance('cut', await saidWithPauses(parts), [700 + (i % 3) * 100]));
  }
  for (const groups of DIGITS) {
    utterances.push(
      utterance(
        'digits',
        await saidWithPauses(groups),
        groups.map(() => 800),
      ),
    );
  }
  const model = new SpeechServerEndOfTurn(endpoint('whisper-1'));
  let failures = 0;
  const settings = { model, language: 'en-US', pauseMs: 200, maxMs: 2000, failed: () => void failures++ };
  const rules = {
    // The gateway's rule: the model, and the pause's words.
    model: (heardAhead: HeardAhead) => endOfTurnRule({ ...settings, heardAhead }),
    // The model alone, for comparison.
    model_voice_only: (heardAhead: HeardAhead) => {
      const { unfinished: _, ...voiceOnly } = endOfTurnRule({ ...settings, heardAhead });
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
    /** The words heard at the pauses that ended a turn too soon ("" when none came). */
    const cutAt: string[] = [];
    const judge = (heard: Utterance, { ends, words }: Awaited<ReturnType<typeof turnEnds>>) => {
      const lastPart = heard.parts.at(-1)!;
      if (heard.kind === 'complete') {
        const end = ends.find((at) => at >= lastPart.endMs);
        if (end !== undefined) endOfTurn.push(end - lastPart.endMs);
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
      const heard = await Promise.all(
        batch.map((one) => turnEnds(one.audio, rules[mode], mode !== 'silence')),
      );
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
        false_cut_rate: Math.round((cuts / continued) * 1000) / 1000,
        ...(mode !== 'silence' ? { cut_at: cutAt } : {}),
        // The same for both: speech over the agent is judged by its words, not by the turn's end.
        ...over,
        ...(mode !== 'silence' ? { model_failures: failures } : {}),
      }),
    );
  }
} finally {
  await server.stop();
}
