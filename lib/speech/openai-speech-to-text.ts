import type { SpeechEndpoint } from '../settings.js';
import { type Pcm, SpeechError, type SpeechToText } from './speech-ports.js';
import { sendSpeechRequest } from './speech-request.js';
import { encodeWav } from './wav.js';

// Speech-to-text through OpenAI's transcription API (spec voice-media-v1 section 4): multipart
// `POST {url}/audio/transcriptions` with `file` (a WAV of the audio), `model`, `language` and
// `response_format=json`, answered `{"text": "…"}`. OpenAI, the local speech server and other
// compatible servers all take it.

export class OpenAiSpeechToText implements SpeechToText {
  constructor(private readonly endpoint: SpeechEndpoint) {}

  async transcribe(audio: Pcm, options: { language: string; signal?: AbortSignal }): Promise<string> {
    if (audio.samples.length === 0) return '';
    const wav = encodeWav(audio);
    const language = primaryLanguage(options.language);
    return sendSpeechRequest({
      endpoint: this.endpoint,
      what: 'speech-to-text',
      method: 'POST',
      path: '/audio/transcriptions',
      body: () => {
        const form = new FormData();
        form.set('file', new Blob([wav as Uint8Array<ArrayBuffer>], { type: 'audio/wav' }), 'audio.wav');
        form.set('model', this.endpoint.model);
        if (language) form.set('language', language);
        form.set('response_format', 'json');
        return form;
      },
      read: async (response) => {
        const body = (await response.json().catch(() => undefined)) as { text?: unknown } | undefined;
        if (typeof body?.text !== 'string') throw new SpeechError('the answer has no "text"', false);
        return body.text.trim();
      },
      signal: options.signal,
    });
  }
}

/** The primary subtag of a BCP 47 tag (`en` for `en-US`), which is what the API's `language` takes. */
export function primaryLanguage(tag: string): string {
  return tag.split(/[-_]/)[0].trim().toLowerCase();
}
