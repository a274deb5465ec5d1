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
  // Norwegian, Swedish, Danish
  'ja',
  'jo',
  'jepp',
  'okei',
  'javel',
  'akkurat',
  'nettopp',
  'precis',
  'jaha',
  'nemlig',
  'klart',
  // German
  'genau',
  'stimmt',
  'gut',
  'richtig',
  'alles',
  'klar',
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
    // Whisper writes "alright" as two words ("All right."): one listener word, not "all" of something.
    .replace(/\ball right\b/g, 'alright')
    .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
    .split(/\s+/)
    .filter(Boolean)
    // A hum spelled letter by letter, or hummed twice, is one listener word.
    .map((token) => (HUM.test(token) ? 'mm' : token))
    .filter((token, i, all) => token !== 'mm' || all[i - 1] !== 'mm');
  if (tokens.length === 0) return true;
  return tokens.length <= MOST_WORDS && tokens.every((token) => BACKCHANNEL_WORDS.has(token));
}
