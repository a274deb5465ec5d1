import alawmulaw from 'alawmulaw';
import { resample } from '../lib/audio/resample.js';
import type { TextToSpeech } from '../lib/speech/speech-ports.js';

// The turn-taking benches' labelled caller utterances (bench/turn-taking.ts, through the gateway's
// stages; bench/turn-taking-gateway.ts, through a gateway process), made with the local voice
// (Piper joe) and carried over the phone line (8 kHz μ-law):
//   - complete: 40 whole sentences;
//   - cut: 30 sentences said in two parts with a 700–900 ms pause between them, the first ending
//     mid-phrase (the whole line made once and cut there, so its first part keeps the voice of a
//     sentence that goes on);
//   - digits: 20 phone and customer numbers read out in groups with 800 ms pauses (made alike).

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

export interface Part {
  samples: Int16Array;
}
export interface Utterance {
  kind: 'complete' | 'cut' | 'digits';
  /** What is said, as written (its parts joined). */
  said: string;
  audio: Int16Array;
  /** Where each part's speech begins and ends in `audio`, ms. */
  parts: { startMs: number; endMs: number }[];
}

const LEAD_MS = 400;
/** After the last part: past VOICE_TURN_MAX_MS, so every turn ends within it. */
const TAIL_MS = 2400;
/** The sound's extent in 8 kHz samples: from the first to the last sample above a whisper. */
function trimmed(samples: Int16Array): Int16Array {
  let first = 0;
  let last = samples.length - 1;
  while (first < last && Math.abs(samples[first]) < 300) first++;
  while (last > first && Math.abs(samples[last]) < 300) last--;
  return samples.slice(first, last + 1);
}

function utterance(kind: Utterance['kind'], said: string, parts: Part[], pausesMs: number[]): Utterance {
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
  return { kind, said, audio, parts: spans };
}

/** The labelled utterances, and `spoken`: a line as the caller says it over the phone line. */
export async function labelledUtterances(tts: TextToSpeech): Promise<{
  utterances: Utterance[];
  spoken: (text: string) => Promise<Part>;
}> {
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
  for (const line of COMPLETE) utterances.push(utterance('complete', line, [await spoken(line)], []));
  for (const [i, parts] of CUT.entries()) {
    const pause = 700 + (i % 3) * 100;
    utterances.push(utterance('cut', parts.join(' '), await saidWithPauses(parts), [pause]));
  }
  for (const groups of DIGITS) {
    const pauses = groups.map(() => 800);
    utterances.push(utterance('digits', groups.join(' '), await saidWithPauses(groups), pauses));
  }
  return { utterances, spoken };
}
