import { readFileSync } from 'node:fs';
import { primaryLanguage } from './openai-speech-to-text.js';

// The languages the local speech server (VOICE_SPEECH=local) hears and speaks, from the list the
// server itself reads (scripts/local-speech/languages.json): English with Whisper tiny.en and the
// Piper voice joe; Norwegian Bokmål, Swedish, Danish and German with multilingual Whisper base and
// eSpeak NG. An agent is published in one of them only (422 language_not_supported otherwise).

interface LocalLanguage {
  /** The BCP 47 tag its voice is listed with, such as nb-NO. */
  tag: string;
  /** Its primary language subtag: an agent's language matches by it (nb-NO, nb). */
  primary: string;
  name: string;
}

const catalogue = JSON.parse(
  readFileSync(new URL('../../scripts/local-speech/languages.json', import.meta.url), 'utf8'),
) as { languages: LocalLanguage[]; aliases: Record<string, string> };

export const LOCAL_SPEECH_LANGUAGES: readonly LocalLanguage[] = catalogue.languages.map(
  ({ tag, primary, name }) => ({ tag, primary, name }),
);

/** Whether the local speech server hears and speaks `language` (a BCP 47 tag, by its primary subtag). */
export function localSpeechServes(language: string): boolean {
  const primary = primaryLanguage(language);
  const served = catalogue.aliases[primary] ?? primary;
  return LOCAL_SPEECH_LANGUAGES.some((known) => known.primary === served);
}
