// Words that cannot end what a person is saying (docs/voice.md, "End of turn by a model"). The
// end-of-turn model hears the voice only, and on the turn-taking bench it called most pauses in the
// middle of a sentence complete. The pause's words (its transcription, begun at the pause for the
// answer anyway: media/heard-ahead.ts) then have their say, as LiveKit's turn detector decides from
// the words: a turn whose words stop without a sentence's closing mark, on a word that leads on or
// a filler ("um"), on a number being read out, a word spelled or a code ("S, M, I", "A B 4"), or
// an email address short of its domain is not over yet. As LiveKit's model reads the conversation
// before the turn, a number is being read out after the agent asked for one too ("What is your
// number?" "It is five five, …"): a short group of digits then goes on, although Whisper writes
// "It is five.", unless it has as many digits as the agent said the number has ("your four-digit
// PIN").

import { askingSentence, QUESTION_END } from './asking-lines.js';
import { readingOutEmail } from './email-read-out.js';
import { knownLength, type PhoneNumberDigits, phoneNumberDigits } from './number-lengths.js';

/**
 * Words after which a sentence goes on: articles, conjunctions, possessives (not in Norwegian,
 * Swedish and Danish, where one may follow its noun: "kortet mitt").
 */
const LEADING_ON: Record<string, ReadonlySet<string>> = {
  en: words('a an the and or but nor because if than whether my your our their its'),
  nb: words('en ei et og eller men fordi hvis om at som'),
  sv: words('en ett och eller men för att om som'),
  da: words('en et og eller men fordi hvis om at som'),
  de: words(
    'der die das den dem des ein eine einen einem einer und oder aber weil wenn dass ob mein meine dein deine unser',
  ),
};
/**
 * Fillers: a person who ends on one is thinking of what comes next ("I would like, um.", "Det er,
 * eh."), as LiveKit's turn detector learned. ("er" is English only: elsewhere it is "is".)
 */
const FILLERS: Record<string, ReadonlySet<string>> = {
  en: words('um umm uh uhm erm er eh hmm'),
  nb: words('eh ehm øh øhm hmm'),
  sv: words('eh ehm öh öhm hmm'),
  da: words('eh ehm øh øhm hmm'),
  de: words('äh ähm öh öhm hm hmm'),
};
/**
 * Prepositions lead on too, but a question may end on one ("What is it for?", "Hvem snakker jeg
 * med?"): after a question mark they are no sign of more to come.
 */
const PREPOSITIONS: Record<string, ReadonlySet<string>> = {
  en: words('to for of from with about into onto'),
  nb: words('til for av fra med på'),
  sv: words('till för av från med på'),
  da: words('til for af fra med på'),
  de: words('zu für von mit aus nach'),
};
/**
 * Two digits said as one number ("forty-seven", "sixty one", "førtisju"), as a number is often read
 * out in pairs: English and Norwegian (elsewhere Whisper writes such pairs in digits).
 */
const PAIR_WORDS: Record<string, RegExp> = {
  en: /^(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:-(?:one|two|three|four|five|six|seven|eight|nine))?)$/,
  nb: /^(?:ti|elleve|tolv|tretten|fjorten|femten|seksten|sytten|atten|nitten|(?:tjue|tretti|førti|femti|seksti|sytti|åtti|nitti)(?:en|to|tre|fire|fem|seks|sju|syv|åtte|ni)?)$/,
};

/** Languages whose words have the same uses (a BCP 47 primary subtag → the one above). */
const SAME_AS: Record<string, string> = { no: 'nb', nn: 'nb' };

/** Digits said as words, in the same languages. */
const DIGIT_WORDS: Record<string, ReadonlySet<string>> = {
  en: words('zero oh o one two three four five six seven eight nine'),
  nb: words('null en ei et to tre fire fem seks sju syv åtte ni'),
  sv: words('noll en ett två tre fyra fem sex sju åtta nio'),
  da: words('nul en et to tre fire fem seks syv otte ni'),
  de: words('null eins zwei drei vier fünf sechs sieben acht neun'),
};

/**
 * Digits said as words that are also a pronoun or an article ("I do not have one", "bare en"), and
 * letters that are words ("Me and I.", "bor i", "å").
 */
const LONE_WORDS = words('one en ei et ett eins a i å');

/**
 * Words that say a number is being given ("my number is", "the code is") or a word spelled out
 * ("it is spelled", "det staves", "buchstabiert"), at a word's start; in Norwegian and German
 * compounds ("kundenummer", "Kundennummer") "nummer" anywhere.
 */
const NUMBER_TALK =
  /(?<!\p{L})(?:number|code|reference|account|card|phone|postcode|zip|booking|ticket|order|member|customer|pin|dial|digit|siffer|sifr|siffr|cifr|ziffer|kod|konto|kort|telefon|referanse|bestilling|billett|karte|buchung|postleitzahl|spell|buchstabi|stav(?:e|es|er|et|a|as|ar|at)(?!\p{L}))|nummer/iu;

/**
 * The counts a line may give a number's length in ("a 4-digit PIN", "the last four digits",
 * "firesifret", "de fire siste sifrene", "vierstellige"), in the five languages read above.
 */
const COUNT_WORDS = new Map<string, number>(
  [
    'one two three four five six seven eight nine ten eleven twelve',
    'en to tre fire fem seks sju åtte ni ti elleve tolv',
    'en två tre fyra fem sex sju åtta nio tio elva tolv',
    'en to tre fire fem seks syv otte ni ti elleve tolv',
    'eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf',
  ]
    .flatMap((counts) => counts.split(' ').map((word, i): [string, number] => [word, i + 1]))
    .concat([['fyr', 4]]), // Swedish compounds: "fyrsiffrig"
);
/** A count, then (after "last" where the language puts it there) a word for digits, or a compound of the two. */
const DIGITS_COUNT = new RegExp(
  `(?<!\\p{L})(\\d{1,2}|${[...COUNT_WORDS.keys()].join('|')})[\\s-]*(?:(?:siste|sista|sidste)\\s+)?` +
    '(?:digits?|sif(?:fer|re|ret|rede|rene)|siffr\\p{L}*|cif(?:fer|re|ret|rede|rene)|stellig\\p{L}*|ziffern|stellen)(?!\\p{L})',
  'iu',
);

/**
 * What the agent's line asks for (numberAskedFor): a number (or a code, a word spelled), of
 * `digits` when the line says how many.
 */
export interface NumberAsked {
  digits?: number;
}

/** "double five" is 55, "triple seven" 777: how many more times the digit after it is said. */
const REPEATED: Record<string, number> = { double: 1, triple: 2 };

/** Whether `token` is one digit, said as a word or written ("five", "5"). */
function isOneDigit(token: string, digitWords: ReadonlySet<string>): boolean {
  return /^\d$/.test(token) || digitWords.has(token);
}

/** The words for "+" read out before a country code (Whisper writes "+47" too). */
const PLUS = words('plus pluss');

/**
 * Whether a transcription of what a person said up to a pause sounds unfinished: no closing mark
 * (Whisper writes ".", "?" or "!" at a sentence's end, and nothing, "…" or "-" where it is cut), a
 * last word that leads on ("a table for", "I was wondering if"), or a number being read out
 * shorter than a whole one (`numberAsked`: the agent's last line asked for one, numberAskedFor,
 * of as many digits as it said, if it did), or an email address short of its domain
 * (email-read-out.ts; `emailAsked`: the agent's line asked for one, emailAskedFor).
 * No words at all: nothing says it is unfinished.
 */
export function soundsUnfinished(
  text: string,
  language: string,
  context: { numberAsked?: NumberAsked | null; emailAsked?: boolean } = {},
): boolean {
  const words = text.trim();
  if (!words) return false;
  if (!/[.?!。？！]["'”’)\]]*$/u.test(words) || /(\.\.\.|…)["'”’)\]]*$/u.test(words)) return true;
  const tokens = words
    .toLowerCase()
    .split(/[\s,;]+/)
    // "+47": the plus, then the country code's digits.
    .flatMap((token) => (token.startsWith('+') ? ['plus', token.slice(1)] : [token]))
    .map((token) => token.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''))
    .filter(Boolean);
  const last = tokens.at(-1) ?? '';
  const primary = language.split('-')[0].toLowerCase();
  const known = Object.hasOwn(LEADING_ON, primary) ? primary : (SAME_AS[primary] ?? 'en');
  const question = QUESTION_END.test(words);
  // "Plan A.", "I got an A.": a capital A after the first word is the letter, not the article.
  const letterA = known === 'en' && /\sA[.?!]["'”’)\]]*$/u.test(words);
  if ((LEADING_ON[known].has(last) && !letterA) || FILLERS[known].has(last)) return true;
  if (!question && PREPOSITIONS[known].has(last)) return true;
  if (readingOutEmail(words, context.emailAsked ?? false)) return true;
  return readingOutNumber(tokens, DIGIT_WORDS[known], PAIR_WORDS[known], {
    said: NUMBER_TALK.test(words),
    asked: context.numberAsked ?? null,
    phoneNumber: phoneNumberDigits(language),
  });
}

/**
 * Whether the agent's line asks for a number: one of its sentences mentions one ("number", "code",
 * "kundenummer"; or a spelling: "Could you spell your name?") and is a question or a request
 * (asking-lines.ts); the number's `digits` when that sentence says how many ("What are the last
 * four digits of your card?"), or when it is of a kind with one length where `language` is spoken
 * ("What is your ZIP code?": 5 in the US; number-lengths.ts). "Your booking number is 4 5 6."
 * asks for nothing: null.
 */
export function numberAskedFor(line: string, language: string): NumberAsked | null {
  const asking = askingSentence(line, NUMBER_TALK);
  if (asking === undefined) return null;
  const count = DIGITS_COUNT.exec(asking)?.[1].toLowerCase();
  if (count === undefined) {
    const digits = knownLength(asking, language);
    return digits === undefined ? {} : { digits };
  }
  const digits = /^\d+$/.test(count) ? Number(count) : (COUNT_WORDS.get(count) ?? 0);
  // "Enter one digit at a time" says how to give it, not its length.
  return digits > 1 ? { digits } : {};
}

/**
 * The words end on a number shorter than a whole one that is being read out: in groups, of 3
 * digits or more, or any after words that say a number is being given ("The code is 33") or once
 * the agent asked for one; a whole one has as many digits as the agent asked for, if it said. So
 * do letters spelled out ("S, M, I", "A B 4"), of no whole length but the one the agent said.
 */
function readingOutNumber(
  tokens: string[],
  digitWords: ReadonlySet<string>,
  pairWords: RegExp | undefined,
  numberTalk: { said: boolean; asked: NumberAsked | null; phoneNumber: PhoneNumberDigits },
): boolean {
  let groups = 0;
  let digits = 0;
  let letters = 0;
  let i = tokens.length - 1;
  for (; i >= 0; i--) {
    const token = tokens[i];
    if (/^\d+([-.]\d+)*$/.test(token) && !/^\d{1,2}\.\d{2}$/.test(token)) {
      // "4.7", "5-5", "336-99": Whisper's way of writing digits read out in groups (not a time, 10.30).
      const parts = token.split(/[-.]/);
      digits += parts.join('').length;
      groups += parts.length;
    } else if (digitWords.has(token)) {
      digits += 1;
      groups++;
    } else if (pairWords?.test(token)) {
      digits += 2;
      groups++;
    } else if (Object.hasOwn(REPEATED, token) && isOneDigit(tokens[i + 1] ?? '', digitWords)) {
      // "double five", "triple 7": the digit after it, said again (British English reads numbers so).
      digits += REPEATED[token];
    } else if (/^\p{L}(?:-\p{L})*$/u.test(token)) {
      // "S", "S-M-I": letters spelled out, a name's or a code's ("A B 4 7"; "U.S.", "a.m." are none).
      const parts = token.split('-');
      letters += parts.length;
      groups += parts.length;
    } else if (/^\p{L}+\d[\p{L}\d]*$/u.test(token)) {
      // "X7Q", "AB12": a code read out, which Whisper writes as one word (not "4th" or "10am").
      letters += token.length;
      groups++;
    } else {
      break;
    }
  }
  if (groups === 0) return false;
  // Asked for four digits, "1234." (or "12 34.") is the whole of it; asked for ten, eight are not.
  // A spelling, or a code with letters, has no length but the one the agent said.
  const { asked, phoneNumber } = numberTalk;
  const phone = PLUS.has(tokens[i] ?? '') ? phoneNumber.international : phoneNumber.national;
  const whole = asked?.digits ?? (letters > 0 ? undefined : phone);
  if (whole !== undefined && digits + letters >= whole) return false;
  if (groups >= 2 || digits + letters >= 3) return true;
  // "I do not have one.", "Me and I.": a lone "one" (or an article: "en", "et"), "I" or "a" is
  // no digit or letter read out unless the caller said they were giving one.
  if (LONE_WORDS.has(tokens.at(-1) ?? '')) return numberTalk.said;
  return numberTalk.said || asked !== null;
}

function words(list: string): ReadonlySet<string> {
  return new Set(list.split(' '));
}
