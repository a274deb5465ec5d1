import { primaryLanguage } from '../speech/openai-speech-to-text.js';
import type { TextToSpeech } from '../speech/speech-ports.js';

// The voices the dashboard's voice picker lists: with speech configured, the voices the
// text-to-speech service really has (its `voice` is the agent's `voice_id`); without, the labels of
// the call simulator's text-only calls. The API takes any id (the spec: "a voice id from the
// dashboard voice picker") and stores it as given; an id the service does not know speaks with its
// default voice.

export interface Voice {
  id: string;
  name: string;
  /** BCP 47 tag of the language it speaks best. */
  language: string;
  /** Known for the simulator's voices; a speech service's list does not say. */
  gender?: 'female' | 'male' | 'neutral';
}

export const VOICES: readonly Voice[] = [
  { id: 'sim-nora', name: 'Nora', language: 'nb-NO', gender: 'female' },
  { id: 'sim-henrik', name: 'Henrik', language: 'nb-NO', gender: 'male' },
  { id: 'sim-emma', name: 'Emma', language: 'en-US', gender: 'female' },
  { id: 'sim-james', name: 'James', language: 'en-GB', gender: 'male' },
  { id: 'sim-alex', name: 'Alex', language: 'en-US', gender: 'neutral' },
  { id: 'sim-lena', name: 'Lena', language: 'de-DE', gender: 'female' },
];

/** `voices` with those of `language` (by primary subtag) first, each part in its order: the picker shows the agent's language first. */
export function languageFirst<V extends { language: string }>(voices: readonly V[], language: string): V[] {
  const its = voices.filter((voice) => primaryLanguage(voice.language) === primaryLanguage(language));
  return [...its, ...voices.filter((voice) => !its.includes(voice))];
}

/** The voice picker's list: the configured text-to-speech service's voices, else the simulator's. */
export async function voicePickerList(tts: TextToSpeech | undefined): Promise<readonly Voice[]> {
  if (!tts) return VOICES;
  return tts.voices();
}
