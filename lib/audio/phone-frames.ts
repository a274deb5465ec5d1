// Phone audio as Media Streams carries it: 20 ms μ-law frames at 8 kHz.
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
