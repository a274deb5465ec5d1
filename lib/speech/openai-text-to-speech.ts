import type { SpeechEndpoint } from '../settings.js';
import { primaryLanguage } from './openai-speech-to-text.js';
import { type Pcm, SpeechError, type SpeechVoice, type TextToSpeech } from './speech-ports.js';
import { sendSpeechRequest } from './speech-request.js';
import { decodeWav } from './wav.js';

// Text-to-speech through OpenAI's speech API (spec voice-media-v1 section 4): `POST {url}/audio/speech`
// with JSON `{model, input, voice, response_format: "wav"}`, the WAV decoded to PCM. The voices come
// from `GET {url}/audio/voices` where the server has it (the local speech server answers
// `{"voices": [{"id", "name", "language"}]}`), else they are OpenAI's own.

/** OpenAI's voices (platform.openai.com/docs/guides/text-to-speech), for servers without /audio/voices. */
export const OPENAI_VOICES: readonly SpeechVoice[] = [
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'nova',
  'onyx',
  'sage',
  'shimmer',
].map((id) => ({ id, name: id[0].toUpperCase() + id.slice(1), language: 'en-US' }));

/** How long a server's voice list is taken as known before it is asked again. */
const VOICES_FRESH_MS = 5 * 60_000;

export class OpenAiTextToSpeech implements TextToSpeech {
  private known: { voices: SpeechVoice[]; at: number } | undefined;

  constructor(private readonly endpoint: SpeechEndpoint) {}

  async synthesize(
    text: string,
    options: { voice: string; language?: string; signal?: AbortSignal },
  ): Promise<Pcm> {
    const voice = await this.voiceOrDefault(options.voice, options.language, options.signal);
    return sendSpeechRequest({
      endpoint: this.endpoint,
      what: 'text-to-speech',
      method: 'POST',
      path: '/audio/speech',
      contentType: 'application/json',
      body: () => JSON.stringify({ model: this.endpoint.model, input: text, voice, response_format: 'wav' }),
      read: async (response) => decodeWav(new Uint8Array(await response.arrayBuffer())),
      signal: options.signal,
    });
  }

  async voices(options: { signal?: AbortSignal } = {}): Promise<SpeechVoice[]> {
    const voices = await sendSpeechRequest({
      endpoint: this.endpoint,
      what: 'text-to-speech',
      method: 'GET',
      path: '/audio/voices',
      // OpenAI has no such route: 404 (or 405) means its known list.
      alsoRead: [404, 405],
      read: async (response) =>
        response.ok ? voiceList(await response.json().catch(() => undefined)) : [...OPENAI_VOICES],
      signal: options.signal,
    });
    this.known = { voices, at: Date.now() };
    return voices;
  }

  /**
   * `voice` when the server has it, else its first voice of `language`, else its default (the first
   * it lists), as the port promises. OpenAI's own voices are all taken as en-US: an agent in another
   * language keeps the voice it names (they speak every language).
   */
  private async voiceOrDefault(
    voice: string,
    language: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const fresh = this.known && Date.now() - this.known.at < VOICES_FRESH_MS;
    const voices = fresh && this.known ? this.known.voices : await this.voices({ signal });
    if (voices.some((known) => known.id === voice)) return voice;
    const ofLanguage = language
      ? voices.find((known) => primaryLanguage(known.language) === primaryLanguage(language))
      : undefined;
    return (ofLanguage ?? voices[0])?.id ?? voice;
  }
}

function voiceList(body: unknown): SpeechVoice[] {
  const voices = (body as { voices?: unknown } | undefined)?.voices;
  const valid =
    Array.isArray(voices) &&
    voices.every(
      (v) => typeof v?.id === 'string' && typeof v.name === 'string' && typeof v.language === 'string',
    );
  if (!valid) throw new SpeechError('the answer is not {"voices": [{"id", "name", "language"}]}', false);
  return voices.map(({ id, name, language }: SpeechVoice) => ({ id, name, language }));
}
