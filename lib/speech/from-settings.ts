import type { Settings } from '../settings.js';
import { OpenAiSpeechToText } from './openai-speech-to-text.js';
import { OpenAiTextToSpeech } from './openai-text-to-speech.js';
import type { SpeechToText, TextToSpeech } from './speech-ports.js';

/**
 * The speech ports the settings name (VOICE_STT_URL / VOICE_TTS_URL); undefined where unset. With
 * VOICE_SPEECH=local, whoever starts the local speech server hands its URL to the processes as those
 * two variables.
 */
export function speechFromSettings(settings: Pick<Settings, 'speech'>): {
  stt: SpeechToText | undefined;
  tts: TextToSpeech | undefined;
} {
  const { stt, tts } = settings.speech;
  return {
    stt: stt ? new OpenAiSpeechToText(stt) : undefined,
    tts: tts ? new OpenAiTextToSpeech(tts) : undefined,
  };
}
