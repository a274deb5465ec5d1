import alawmulaw from 'alawmulaw';
import { resample } from '../lib/audio/resample.js';
import type { SpeechToText, TextToSpeech } from '../lib/speech/speech-ports.js';

// The turn-taking benches' labelled caller utterances (bench/turn-taking.ts, through the gateway's
// stages; bench/turn-taking-gateway.ts, through a gateway process), made with the local voice
// (Piper joe) and carried over the phone line (8 kHz μ-law):
//   - complete: 40 whole sentences;
//   - cut: 30 sentences said in two parts with a 700–900 ms pause between them, the first ending
//     in the middle of a phrase, where people hesitate ("I need a taxi to the, airport at six"; the
//     whole line made once and cut there, so its first part keeps the voice of a sentence that goes
//     on, and each cut checked by ear: by the local Whisper);
//   - digits: 20 phone and customer numbers read out in groups with 800 ms pauses (made alike), as
//     the answer to the agent asking for the number (`asked`: NUMBER_QUESTION), as on a call;
//   - afterthoughts: 10 whole sentences followed by a pause and more ("I need a taxi. To the
//     airport at six."), reported apart: a turn that ends at such a pause is no false cut.

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

/** Said in two parts, the first ending in the middle of a phrase: not a sentence on its own. */
const CUT: [string, string][] = [
  ['I would like to book a,', 'table for two on Friday.'],
  ['Can you tell me when the,', 'store opens tomorrow?'],
  ['I need to change my,', 'delivery address.'],
  ['Please cancel my,', 'appointment on Monday morning.'],
  ['Is there a pharmacy near the,', 'central station?'],
  ['I would like to talk about,', 'my bill with someone.'],
  ['The heating in my,', 'apartment is broken.'],
  ['Could you send me,', 'the invoice again?'],
  ['We are three adults and,', 'two children.'],
  ['What is the price of,', 'a single ticket?'],
  ['My flight to Berlin,', 'was cancelled this morning.'],
  ['I want to renew my,', 'subscription for a year.'],
  ['The package was left at the,', 'wrong door.'],
  ['I am calling about,', 'the job advertisement.'],
  ['How long does,', 'the repair usually take?'],
  ['I have a question about,', 'my insurance.'],
  ['The meeting has been moved to,', 'Thursday afternoon.'],
  ['I would like a seat by the,', 'window, please.'],
  ['My name is,', 'Kari Nordmann.'],
  ['The code did not,', 'work when I tried it.'],
  ['I need a taxi to the,', 'airport at six.'],
  ['We would like to order two,', 'large pizzas.'],
  ['The water bill seems,', 'too high this month.'],
  ['I forgot my,', 'password again.'],
  ['Is the museum open on,', 'public holidays?'],
  ['I would like to return a pair of,', 'shoes I bought.'],
  ['The train was,', 'forty minutes late.'],
  ['Could you check if my,', 'payment went through?'],
  ['I was wondering if,', 'you have any rooms left.'],
  ['Can I bring,', 'my dog along?'],
];

/**
 * A whole sentence, a pause, then more to it: a turn may end at that pause, as a person listening
 * would take it (reported apart, with no target: what follows such an end is the agent answering
 * the first sentence, or the caller speaking over it).
 */
const AFTERTHOUGHT: [string, string][] = [
  ['I need a taxi.', 'To the airport at six.'],
  ['Please cancel my appointment.', 'The one on Monday morning.'],
  ['Is there a pharmacy?', 'Near the central station.'],
  ['I have a question.', 'About my insurance.'],
  ['We would like to order.', 'Two large pizzas.'],
  ['I want to renew my subscription.', 'For another year.'],
  ['The meeting has been moved.', 'To Thursday afternoon.'],
  ['I would like a window seat.', 'If there is one left.'],
  ['I forgot my password.', 'Again.'],
  ['The package was left outside.', 'At the wrong door.'],
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
/** What the agent asks before a caller reads out a number; the caller's line that leads to it. */
export const NUMBER_QUESTION = 'Sure. What is the number?';
export const GIVES_NUMBER = 'I have a number for you.';
/** What the agent says before every other line. */
const OPEN_QUESTION = 'How can I help you today?';

export interface Utterance {
  kind: 'complete' | 'cut' | 'digits' | 'afterthought';
  /** The agent's line the caller answers with it (the end-of-turn rule reads the words after it). */
  asked: string;
  /** What is said, as written (its parts joined). */
  said: string;
  audio: Int16Array;
  /** Where each part's speech begins and ends in `audio`, ms. */
  parts: { startMs: number; endMs: number }[];
}

const LEAD_MS = 400;
/** How many times a line said in parts is made until each of its cuts is heard where it belongs. */
const CUT_TRIES = 3;
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
  return { kind, asked: kind === 'digits' ? NUMBER_QUESTION : OPEN_QUESTION, said, audio, parts: spans };
}

/** A word as compared: lower case, without punctuation; a number written in digits as its digits' words. */
const DIGIT_NAMES = 'zero one two three four five six seven eight nine'.split(' ');
function wordsOf(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/\d/g, (digit) => ` ${DIGIT_NAMES[Number(digit)]} `)
    .split(/[^\p{L}']+/u)
    .filter(Boolean);
}

/** Numbers as Whisper may write a group of digits read out ("one two" as "12", "twelve"). */
const NUMBER_WORD =
  /^(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\w+teen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred)$/;
/** Whether `heard` ends on the word `part` ends on (for a number, on a number). */
function endsAlike(heard: string[], part: string[]): boolean {
  const [last, said] = [heard.at(-1) ?? '', part.at(-1) ?? ''];
  return last === said || (NUMBER_WORD.test(said) && NUMBER_WORD.test(last));
}

/** The 20 ms windows' loudness around `at`: the quietest places (local minima) first. */
function quietPlaces(samples: Int16Array, at: number, reach: number): number[] {
  const energyAt = (c: number) => {
    let energy = 0;
    for (let k = c - 80; k < c + 80; k++) energy += Math.abs(samples[k]);
    return energy;
  };
  const places: { c: number; energy: number }[] = [];
  for (let c = Math.max(160, at - reach); c <= Math.min(samples.length - 160, at + reach); c += 40) {
    places.push({ c, energy: energyAt(c) });
  }
  return places
    .filter(
      (p, i) =>
        (places[i - 1]?.energy ?? Infinity) >= p.energy && (places[i + 1]?.energy ?? Infinity) >= p.energy,
    )
    .sort((a, b) => a.energy - b.energy)
    .map((p) => p.c);
}

/** The labelled utterances, and `spoken`: a line as the caller says it over the phone line. */
export async function labelledUtterances(
  tts: TextToSpeech,
  stt: SpeechToText,
): Promise<{
  utterances: Utterance[];
  spoken: (text: string) => Promise<Part>;
  /** Parts whose cut no transcription confirmed (cut at the quietest place near where they end). */
  unconfirmedCuts: string[];
}> {
  const spoken = async (text: string): Promise<Part> => {
    const made = await tts.synthesize(text, { voice: 'joe' });
    const phone = alawmulaw.mulaw.decode(
      alawmulaw.mulaw.encode(resample(made.samples, made.sampleRate, 8000)),
    );
    return { samples: trimmed(phone) };
  };
  const unconfirmedCuts: string[] = [];
  /**
   * The parts as one sentence said with pauses: the whole line is made once (so its first part keeps
   * the voice of a sentence that goes on) and cut where each part ends. That place is looked for
   * near the part's own length, at the quietest places first, and taken when the local Whisper
   * hears the part end there on its last word (no sound of the next word carried into it). Piper
   * says a line a little differently each time: a line whose cut is not found is made again, up to
   * CUT_TRIES times, and then cut at the quietest place (reported in `unconfirmedCuts`).
   */
  const saidWithPauses = async (parts: string[]): Promise<Part[]> => {
    let unconfirmed: string[] = [];
    let cutLine: Part[] = [];
    for (let tries = 0; tries < CUT_TRIES && (tries === 0 || unconfirmed.length > 0); tries++) {
      const whole = (await spoken(parts.join(' ').replace(/,\s/g, ' '))).samples;
      const cuts: number[] = [];
      unconfirmed = [];
      let from = 0;
      let at = 0;
      for (const part of parts.slice(0, -1)) {
        at += (await spoken(part)).samples.length;
        const places = quietPlaces(whole, Math.min(at, whole.length - 160), 2400).filter(
          (c) => c > from + 800,
        );
        let cut: number | undefined;
        const heardAt: string[] = [];
        for (const place of places.slice(0, 10)) {
          const heard = await stt.transcribe(
            { sampleRate: 8000, samples: whole.slice(from, place) },
            { language: 'en-US' },
          );
          heardAt.push(heard);
          const [heardWords, partWords] = [wordsOf(heard), wordsOf(part)];
          if (endsAlike(heardWords, partWords) && heardWords.length <= partWords.length + 1) {
            cut = place;
            break;
          }
        }
        if (cut === undefined) unconfirmed.push(`${part} (heard: ${heardAt.slice(0, 3).join(' | ')})`);
        cuts.push(cut ?? places[0] ?? at);
        from = at = cuts.at(-1)!;
      }
      const edges = [0, ...cuts, whole.length];
      cutLine = edges.slice(0, -1).map((start, i) => ({ samples: whole.slice(start, edges[i + 1]) }));
    }
    unconfirmedCuts.push(...unconfirmed);
    return cutLine;
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
  for (const [i, parts] of AFTERTHOUGHT.entries()) {
    const pause = 700 + (i % 3) * 100;
    utterances.push(utterance('afterthought', parts.join(' '), await saidWithPauses(parts), [pause]));
  }
  return { utterances, spoken, unconfirmedCuts };
}
