// An email address read out ("john dot smith, at gmail dot com"), which Whisper writes part by part
// as finished sentences ("My email is john.smith.", "… john.smith at gmail."): an address is not
// whole before it has its "@" and a domain with a dot after it, so a turn whose words stop short
// of that goes on (lib/voice-runtime/unfinished-words.ts), as a number read out does.

import { askingSentence } from './asking-lines.js';

/** Words that name an email address, at a word's start: "email", "e-mail", "e-post(adressen)", "mejl", "E-Mail". */
const EMAIL_WORD = '(?<!\\p{L})(?:e-?mail|e-?post|mejl|mail)';
const EMAIL_TALK = new RegExp(EMAIL_WORD, 'iu');
/**
 * The caller saying an address is being given: an email word, maybe "address" or a possessive
 * after it ("e-postadressen min er"), then "is" ("My email address is", "Min mejl är", "Meine
 * E-Mail-Adresse ist").
 */
const EMAIL_GIVEN = new RegExp(
  `${EMAIL_WORD}[\\p{L}-]*(?:\\s+(?:address|min|mi|mitt|din))?\\s+(?:is|er|är|ist|lautet)(?!\\p{L})`,
  'iu',
);
/** The "@", written or read out ("at", "krøllalfa", "snabel-a", "Klammeraffe"; "at all" is none). */
const AT = /@|(?<!\p{L})(?:at(?!\s+all(?!\p{L}))|krøllalfa|snabel-?a|klammeraffe)(?!\p{L})/iu;
/**
 * How words that are no address begin after "My email is": a negation, an article, an adverb ("My
 * email is not working at the moment.", "… is the same as before.", "E-posten min er ikke …").
 */
const NO_ADDRESS =
  /^\s*(?:not|no|the|a|an|still|also|now|ikke|inte|ikkje|nicht|kein\p{L}*|den|det|fortsatt|fremdeles|samma|samme|die|der|das|noch)(?!\p{L})/iu;
/** A dot inside an address ("john.smith"), or read out ("dot", "punktum", "punkt") and then `after`. */
const dotThen = (after: string) =>
  new RegExp(`[\\p{L}\\d]\\.[\\p{L}\\d]|(?<!\\p{L})(?:dot|punktum|punkt)${after}`, 'iu');
/** A dot of an address, written or read out. */
const DOT = dotThen('(?!\\p{L})');
/** A domain's dot with a name after it ("gmail.com", "gmail dot com"), not "gmail dot." cut at the dot. */
const DOMAIN_DOT = dotThen('\\s+[\\p{L}\\d]');

/** Whether the agent's line asks for an email address ("What is your email address?", "Hva er e-postadressen din?"). */
export function emailAskedFor(line: string): boolean {
  return askingSentence(line, EMAIL_TALK) !== undefined;
}

/**
 * Whether `words` end inside an email address being read out: after the caller said one is being
 * given ("My email is"), or the agent asked for one (`asked`), words that are an address's (a dot,
 * an "at") without its "@" yet, or with an "@" but no domain's dot after it.
 */
export function readingOutEmail(words: string, asked: boolean): boolean {
  const given = EMAIL_GIVEN.exec(words);
  if (!given && !asked) return false;
  const address = given ? words.slice(given.index + given[0].length) : words;
  if (given && NO_ADDRESS.test(address)) return false;
  const at = AT.exec(address);
  if (!at) return DOT.test(address);
  return !DOMAIN_DOT.test(address.slice(at.index + at[0].length));
}
