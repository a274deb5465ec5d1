import { resample } from '../../lib/audio/resample.js';
import { OpenAiSpeechToText } from '../../lib/speech/openai-speech-to-text.js';
import { OpenAiTextToSpeech } from '../../lib/speech/openai-text-to-speech.js';
import type { SpeechToText, TextToSpeech } from '../../lib/speech/speech-ports.js';
import { startLocalSpeechServer } from '../../scripts/local-speech-server.js';

// Speech for the audio tests: the real local speech server (VOICE_SPEECH=local; provisioned like
// the Temporal binaries), the ports on it as the gateway builds them, a caller's line made with
// Piper and put through the phone line's 8 kHz, and what the agent said transcribed back.
// Under `npm test` every file shares the one server scripts/test.ts started (TEST_SPEECH_URL); a
// file run on its own starts its own.

export interface TestSpeech {
  /** http://127.0.0.1:PORT/v1 */
  url: string;
  stt: SpeechToText;
  tts: TextToSpeech;
  /** `text` as a caller says it: Piper's voice (or `voice`, such as espeak-nb) at the phone line's 8 kHz. */
  callerSays(text: string, voice?: string): Promise<Int16Array>;
  /** The words in 8 kHz audio (heard in `language`, default en-US), lower case. */
  transcribe(audio: Int16Array, language?: string): Promise<string>;
  close(): Promise<void>;
}

export async function startTestSpeech(): Promise<TestSpeech> {
  const shared = process.env.TEST_SPEECH_URL;
  const server = shared
    ? { url: shared, stop: async () => {} }
    : await startLocalSpeechServer({ log: (line) => process.stderr.write(`${line}\n`) });
  const endpoint = (model: string) => ({ url: server.url, apiKey: undefined, model, timeoutMs: 15_000 });
  const stt = new OpenAiSpeechToText(endpoint('whisper-1'));
  const tts = new OpenAiTextToSpeech(endpoint('tts-1'));
  return {
    url: server.url,
    stt,
    tts,
    async callerSays(text, voice = 'joe') {
      const spoken = await tts.synthesize(text, { voice });
      return resample(spoken.samples, spoken.sampleRate, 8000);
    },
    async transcribe(audio, language = 'en-US') {
      return (await stt.transcribe({ sampleRate: 8000, samples: audio }, { language })).toLowerCase();
    },
    close: () => server.stop(),
  };
}
