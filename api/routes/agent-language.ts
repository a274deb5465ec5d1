import type { Settings } from '../../lib/settings.js';
import { LOCAL_SPEECH_LANGUAGES, localSpeechServes } from '../../lib/speech/local-languages.js';
import { languageNotSupported } from '../http/errors.js';

// A published agent's language must be one the deployment's speech hears and speaks (issue 34):
// with VOICE_SPEECH=local, one of the local speech server's (lib/speech/local-languages.ts), else
// an agent in its default nb-NO would be heard as English nonsense. Hosted speech (VOICE_STT_URL
// without VOICE_SPEECH=local) is asked in the agent's language as given: that service decides.
// Checked when the agent is published, and when a published agent's language changes.

export function refuseLanguageNotServed(settings: Pick<Settings, 'speech'>, language: string): void {
  if (!settings.speech.local || localSpeechServes(language)) return;
  throw languageNotSupported(
    language,
    LOCAL_SPEECH_LANGUAGES.map((known) => `${known.tag} (${known.name})`).join(', '),
  );
}
