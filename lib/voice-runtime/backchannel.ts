// Backchannels: the short words a listener says while the other one talks ("mhm", "yeah", "okay",
// "ja", "mm"), which mean "go on", not "stop" (issue "turn-taking and languages": interruptions
// that mean it; LiveKit's adaptive interruption is the anchor). Speech over the agent whose words
// are only these does not stop the agent (media/interruptions.ts).

/** The words, lower case, of the agent languages the service speaks (English, Norwegian, Swedish, Danish, German). */
const BACKCHANNEL_WORDS = new Set([
  // English, as Whisper writes them too ("Mm-hmm.", "Uh-huh.")
  'mm',
  'mmm',
  'mhm',
  'hmm',
  'hm',
  'uh',
  'huh',
  'um',
  'ah',
  'aha',
  'oh',
  'yeah',
  'yes',
  'yep',
  'yup',
  'ok',
  'okay',
  'right',
  'sure',
  'alright',
  'i',
  'see',
  'got',
  'it',
  'cool',
  'fine',
  'good',
  'great',
  'perfect',
  'exactly',
  'absolutely',
  'gotcha',
  'true',
  'sounds', // "sounds good"
  // Norwegian ("ja vel" is read as one word: javel)
  'ja',
  'jo',
  'jepp',
  'okei',
  'javel',
  'akkurat',
  'nettopp',
  'jaha',
  'jaså',
  'greit',
  'fint',
  'flott',
  'supert',
  'skjønner',
  'stemmer',
  'riktig',
  'absolutt',
  // Swedish
  'precis',
  'okej',
  'visst',
  'absolut',
  'exakt',
  'bra',
  'toppen',
  // Danish
  'nemlig',
  'klart',
  'nå',
  'præcis',
  'godt',
  // German ("ach so" is read as one word: achso)
  'genau',
  'stimmt',
  'gut',
  'richtig',
  'alles',
  'klar',
  'achso',
  'jawohl',
  'super',
  'prima',
  'verstehe',
  'natürlich',
  'sicher',
]);

/**
 * A hum, however Whisper writes it: a word of only m's and h's ("Mmmm.", "Hmmm", "Mhmm"), or such a
 * hum spelled letter by letter ("M-H-M.", "M&M."), which is how it heard the local voice's "Mhm".
 * No word of the service's languages is made of these letters alone.
 */
const HUM = /^[mh]+$/;

/** Longest backchannel, in words: "yeah yeah okay". */
const MOST_WORDS = 3;

/**
 * Whether `words` (a transcription) are only a backchannel: one to three of the words above, or
 * nothing at all (a breath, a cough: no words, so no reason to stop the agent).
 */
export function isBackchannel(words: string): boolean {
  const tokens = words
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
    .replace(/\s+/g, ' ')
    // Whisper writes "alright" as two words ("All right."): one listener word, not "all" of something;
    // and so are Norwegian's "ja vel" and German's "ach so" ("vel" and "so" alone begin a sentence).
    .replace(/\ball right\b/g, 'alright')
    .replace(/\bja vel\b/g, 'javel')
    .replace(/\bach so\b/g, 'achso')
    .split(' ')
    .filter(Boolean)
    // A hum spelled letter by letter, or hummed twice, is one listener word.
    .map((token) => (HUM.test(token) ? 'mm' : token))
    .filter((token, i, all) => token !== 'mm' || all[i - 1] !== 'mm');
  if (tokens.length === 0) return true;
  return tokens.length <= MOST_WORDS && tokens.every((token) => BACKCHANNEL_WORDS.has(token));
}
