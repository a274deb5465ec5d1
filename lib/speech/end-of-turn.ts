import type { Settings, SpeechEndpoint } from '../settings.js';
import { type Pcm, SpeechError } from './speech-ports.js';
import { sendSpeechRequest } from './speech-request.js';
import { encodeWav } from './wav.js';

// The end-of-turn model's port (docs/voice.md, "End of turn by a model"): whether a caller who has
// paused has finished their turn, from its audio so far. The local speech server answers it with
// Smart Turn v3.2 (scripts/local-speech/turn_model.py): multipart `POST {url}/audio/turn` with
// `file` (a WAV of the turn), answered `{"complete": boolean, "probability": number}`. A hosted
// speech service may have no such route: its 404 (or 405) is a failure that is not retried, and
// the gateway falls back to the silence rule for the call (lib/audio/turn-detector.ts); the port
// remembers it for MISSING_RECHECK_MS, so later calls fall back at once, without a request.

export interface EndOfTurnModel {
  /** Whether the speaker has finished, judged from `audio` (the turn so far, up to its pause). */
  complete(audio: Pcm, options?: { signal?: AbortSignal }): Promise<boolean>;
}

/** A turn's decision waits this long at most: past it the turn is decided as if the model had failed. */
export const END_OF_TURN_TIMEOUT_MS = 1_500;

/** How long a speech service that had no end-of-turn route is not asked again. */
export const MISSING_RECHECK_MS = 10 * 60_000;

export class SpeechServerEndOfTurn implements EndOfTurnModel {
  private readonly endpoint: SpeechEndpoint;
  /** Epoch ms until which the service counts as having no end-of-turn route (it answered 404). */
  private missingUntil = 0;

  constructor(endpoint: SpeechEndpoint) {
    // One quick attempt: a decision that comes late is of no use (the turn ends by silence instead).
    this.endpoint = { ...endpoint, timeoutMs: END_OF_TURN_TIMEOUT_MS };
  }

  async complete(audio: Pcm, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    if (Date.now() < this.missingUntil) throw this.missing();
    const wav = encodeWav(audio);
    return sendSpeechRequest({
      endpoint: this.endpoint,
      what: 'end-of-turn model',
      method: 'POST',
      path: '/audio/turn',
      retries: false,
      body: () => {
        const form = new FormData();
        form.set('file', new Blob([wav as Uint8Array<ArrayBuffer>], { type: 'audio/wav' }), 'turn.wav');
        return form;
      },
      alsoRead: [404, 405],
      read: async (response) => {
        if (response.status === 404 || response.status === 405) {
          await response.body?.cancel(); // the error's text is not needed: the connection is kept
          this.missingUntil = Date.now() + MISSING_RECHECK_MS;
          throw this.missing();
        }
        const body = (await response.json().catch(() => undefined)) as { complete?: unknown } | undefined;
        if (typeof body?.complete !== 'boolean') throw new SpeechError('the answer has no "complete"', false);
        return body.complete;
      },
      signal: options.signal,
    });
  }

  private missing(): SpeechError {
    return new SpeechError(
      'end-of-turn model: the speech service has none (POST /audio/turn is no route there)',
      false,
    );
  }
}

/** The gateway's model by its settings: with VOICE_TURN_DETECTION=model, the speech-to-text service's. */
export function endOfTurnFromSettings(settings: Pick<Settings, 'media' | 'speech'>): {
  endOfTurn?: EndOfTurnModel;
} {
  const { stt } = settings.speech;
  if (settings.media.turnDetection.mode !== 'model' || !stt) return {};
  return { endOfTurn: new SpeechServerEndOfTurn(stt) };
}
