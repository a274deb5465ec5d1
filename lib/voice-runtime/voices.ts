// The voices the built-in speech side offers (the call simulator's text-to-speech stand-in), as
// the dashboard's voice picker lists them. An agent's `voice_id` is one of these ids; the API
// takes any id (the spec: "a voice id from the dashboard voice picker") and stores it as given.

export interface Voice {
  id: string;
  name: string;
  /** BCP 47 tag of the language it speaks best. */
  language: string;
  gender: 'female' | 'male' | 'neutral';
}

export const VOICES: readonly Voice[] = [
  { id: 'sim-nora', name: 'Nora', language: 'nb-NO', gender: 'female' },
  { id: 'sim-henrik', name: 'Henrik', language: 'nb-NO', gender: 'male' },
  { id: 'sim-emma', name: 'Emma', language: 'en-US', gender: 'female' },
  { id: 'sim-james', name: 'James', language: 'en-GB', gender: 'male' },
  { id: 'sim-alex', name: 'Alex', language: 'en-US', gender: 'neutral' },
  { id: 'sim-lena', name: 'Lena', language: 'de-DE', gender: 'female' },
];
