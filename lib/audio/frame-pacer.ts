// The agent's audio as the phone hears it: 20 ms μ-law frames at 8 kHz, and the playback clock that
// says how far a playback had got at a moment (what a barge-in interrupted).
import { encodeMulaw } from './mulaw.js';

/** Samples per second of phone audio. */
export const PHONE_SAMPLE_RATE = 8000;
/** Milliseconds of audio per Media Streams frame. */
export const FRAME_MS = 20;
/** Samples (and μ-law bytes) per frame: 160. */
export const FRAME_SAMPLES = (PHONE_SAMPLE_RATE * FRAME_MS) / 1000;
/** μ-law's code for a zero sample, the padding of a last partial frame. */
const MULAW_SILENCE = 0xff;

/** 8 kHz PCM of any length as 160-byte μ-law frames; the last frame is padded with silence. */
export function toMulawFrames(samples: Int16Array): Uint8Array[] {
  const frames: Uint8Array[] = [];
  for (let start = 0; start < samples.length; start += FRAME_SAMPLES) {
    const encoded = encodeMulaw(samples.subarray(start, start + FRAME_SAMPLES));
    if (encoded.length === FRAME_SAMPLES) {
      frames.push(encoded);
    } else {
      const padded = new Uint8Array(FRAME_SAMPLES).fill(MULAW_SILENCE);
      padded.set(encoded);
      frames.push(padded);
    }
  }
  return frames;
}

/**
 * The sample playing at `atMs` of a playback of 8 kHz audio that started at `startedAtMs` (same
 * clock): negative before it started; at or past the audio's length once it has all played.
 */
export function samplePlayingAt(startedAtMs: number, atMs: number): number {
  return Math.floor(((atMs - startedAtMs) * PHONE_SAMPLE_RATE) / 1000);
}

/**
 * How many of the pieces played one after another (their lengths in samples, e.g. one per
 * sentence) had started when the playback reached `sample`: the pieces a listener began to hear.
 */
export function piecesStartedBy(pieceSamples: readonly number[], sample: number): number {
  let start = 0;
  let started = 0;
  for (const length of pieceSamples) {
    if (start > sample) break;
    started++;
    start += length;
  }
  return started;
}
