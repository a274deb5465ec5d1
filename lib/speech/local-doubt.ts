import { primaryLanguage } from './openai-speech-to-text.js';

// How unsure the local speech's English recogniser (Whisper tiny.en) may be of a pause's words before
// they are doubted (media/end-of-turn-rule.ts). Measured on the turn-taking bench's labelled lines,
// as the gateway sends a pause (docs/performance.md, "Whisper's own doubt at the pause"): complete
// sentences −0.03 to −0.25 average log probability per token, cut-off phrases that Whisper wrote as
// finished ("The meeting has been moved to.") −0.27 to −0.59. Another model's scores are not on the
// same scale, and multilingual Whisper base is unsure of nearly every turn: English only.

const TINY_EN_DOUBTS_BELOW = -0.26;

/** The average log probability below which the local speech's words at a pause are unsure; undefined: none is known. */
export function localSpeechDoubtsBelow(language: string): number | undefined {
  return primaryLanguage(language) === 'en' ? TINY_EN_DOUBTS_BELOW : undefined;
}
