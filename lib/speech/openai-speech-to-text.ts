import type { SpeechEndpoint } from '../settings.js';
import { type HeardWords, type Pcm, SpeechError, type SpeechToText } from './speech-ports.js';
import { sendSpeechRequest } from './speech-request.js';
import { encodeWav } from './wav.js';

// Speech-to-text through OpenAI's transcription API (spec voice-media-v1 section 4): multipart
// `POST {url}/audio/transcriptions` with `file` (a WAV of the audio), `model`, `language` and
// `response_format=json`, answered `{"text": "…"}`. OpenAI, the local speech server and other
// compatible servers all take it. `transcribeScored` asks `verbose_json` instead, whose segments
// carry Whisper's `avg_logprob` (whisper-1 and the local speech server give it; not every model does).

type Options = { language: string; signal?: AbortSignal };

export class OpenAiSpeechToText implements SpeechToText {
  constructor(private readonly endpoint: SpeechEndpoint) {}

  async transcribe(audio: Pcm, options: Options): Promise<string> {
    if (audio.samples.length === 0) return '';
    return (await this.request(audio, options, 'json')).text;
  }

  async transcribeScored(audio: Pcm, options: Options): Promise<HeardWords> {
    if (audio.samples.length === 0) return { text: '' };
    return this.request(audio, options, 'verbose_json');
  }

  private request(audio: Pcm, options: Options, format: 'json' | 'verbose_json'): Promise<HeardWords> {
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
        form.set('response_format', format);
        return form;
      },
      read: async (response) => heardWords(await response.json().catch(() => undefined)),
      signal: options.signal,
    });
  }
}

/** The words of a json or verbose_json answer, with the last segment's `avg_logprob` when it has one. */
function heardWords(body: unknown): HeardWords {
  const { text, segments } = (body ?? {}) as { text?: unknown; segments?: unknown };
  if (typeof text !== 'string') throw new SpeechError('the answer has no "text"', false);
  const last = Array.isArray(segments)
    ? (segments.at(-1) as { avg_logprob?: unknown } | undefined)
    : undefined;
  const avgLogprob = last?.avg_logprob;
  return {
    text: text.trim(),
    ...(typeof avgLogprob === 'number' && Number.isFinite(avgLogprob) ? { avgLogprob } : {}),
  };
}

/** The primary subtag of a BCP 47 tag (`en` for `en-US`), which is what the API's `language` takes. */
export function primaryLanguage(tag: string): string {
  return tag.split(/[-_]/)[0].trim().toLowerCase();
}
