import { mediaSttDuration, timed } from '../lib/metrics/gateway-metrics.js';
import { retryWithBackoff } from '../lib/retry-with-backoff.js';
import { speechComesBack } from '../lib/speech/speech-comes-back.js';
import type { HeardWords, SpeechToText } from '../lib/speech/speech-ports.js';

// What of the person's speech is transcribed (media/user-turns.ts, media/interruptions.ts): a turn,
// a pause's utterance so far, the first words over the agent; timed as `media_stt_seconds`.

/**
 * Of a longer turn only its last this many ms are transcribed: a caller who never stops (a
 * television, a looped recording) makes 30 s turns, whose whole transcription took the speech
 * server longer than the call could wait on a 2-core machine; the end of a turn is what the
 * agent answers.
 */
const TRANSCRIBED_TAIL_MS = 12_000;
const TAIL_SAMPLES = TRANSCRIBED_TAIL_MS * 8;

/** The words of `audio` (8 kHz): of audio longer than TRANSCRIBED_TAIL_MS, its end's (bounded work per turn). */
export function transcribeTurn(
  stt: SpeechToText,
  language: string,
  audio: Int16Array,
  signal?: AbortSignal,
): Promise<string> {
  return hearTurn(stt, language, audio, signal ? { signal } : {}).then(({ text }) => text);
}

/**
 * transcribeTurn's words, `scored`: with the recogniser's confidence in them when the port gives it
 * (a pause's, which the end of the turn reads: media/end-of-turn-rule.ts).
 */
export function hearTurn(
  stt: SpeechToText,
  language: string,
  audio: Int16Array,
  options: { signal?: AbortSignal; scored?: boolean } = {},
): Promise<HeardWords> {
  const { signal, scored = false } = options;
  const asked = { language, ...(signal ? { signal } : {}) };
  return bounded(audio, signal, (samples) =>
    scored && stt.transcribeScored
      ? stt.transcribeScored({ sampleRate: 8000, samples }, asked)
      : stt.transcribe({ sampleRate: 8000, samples }, asked).then((text) => ({ text })),
  );
}

function bounded<T>(
  audio: Int16Array,
  signal: AbortSignal | undefined,
  hear: (samples: Int16Array) => Promise<T>,
) {
  const samples = audio.length > TAIL_SAMPLES ? audio.subarray(audio.length - TAIL_SAMPLES) : audio;
  return timed(mediaSttDuration, () =>
    retryWithBackoff(
      () => hear(samples),
      // A speech server being started again is waited for: the turn comes late, not lost.
      speechComesBack({ signal }),
    ),
  );
}
