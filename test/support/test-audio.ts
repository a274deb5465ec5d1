// Audio for the audio tests: the committed speech fixtures (scripts/make-speech-fixtures.ts), tones,
// seeded noise, and timelines laid out from them so a test knows where speech really is.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeMulaw } from '../../lib/audio/mulaw.js';

export const PHONE_RATE = 8000;

/** A committed caller line (8 kHz), trimmed to the speech itself. */
export function speechFixture(name: 'order-status' | 'confirmation'): Int16Array {
  return decodeMulaw(
    readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'speech', `${name}.ulaw`)),
  );
}

export function tone(frequency: number, rate: number, samples: number, amplitude = 10_000): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) =>
    Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / rate)),
  );
}

/** White noise of the given peak amplitude, the same for the same seed. */
export function noise(samples: number, amplitude: number, seed = 1): Int16Array {
  let state = seed >>> 0;
  return Int16Array.from({ length: samples }, () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return Math.round((unit * 2 - 1) * amplitude);
  });
}

/** The amplitude of `frequency` in `samples` (one DFT bin, edges left out). */
export function toneAmplitude(samples: ArrayLike<number>, frequency: number, rate: number): number {
  let re = 0;
  let im = 0;
  const from = Math.floor(samples.length / 10);
  const to = samples.length - from;
  for (let i = from; i < to; i++) {
    re += samples[i] * Math.cos((2 * Math.PI * frequency * i) / rate);
    im += samples[i] * Math.sin((2 * Math.PI * frequency * i) / rate);
  }
  return (2 * Math.hypot(re, im)) / (to - from);
}

export function rms(samples: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] * samples[i];
  return Math.sqrt(sum / samples.length);
}

/** A piece of a timeline: speech, or a stretch of quiet (low noise) of the given length. */
export type TimelinePart = { speech: Int16Array } | { quietMs: number };

/**
 * The parts one after another at 8 kHz, over a floor of low noise (about -60 dBFS), with where each
 * speech part begins and ends (ms from the start).
 */
export function timeline(parts: TimelinePart[]): {
  audio: Int16Array;
  speech: { startMs: number; endMs: number }[];
} {
  const pieces = parts.map((part) =>
    'speech' in part ? part.speech : new Int16Array((part.quietMs * PHONE_RATE) / 1000),
  );
  const audio = noise(
    pieces.reduce((total, piece) => total + piece.length, 0),
    30,
  );
  const speech: { startMs: number; endMs: number }[] = [];
  let offset = 0;
  parts.forEach((part, i) => {
    if ('speech' in part) {
      for (let j = 0; j < part.speech.length; j++) {
        audio[offset + j] = Math.max(-32768, Math.min(32767, audio[offset + j] + part.speech[j]));
      }
      speech.push({
        startMs: (offset * 1000) / PHONE_RATE,
        endMs: ((offset + part.speech.length) * 1000) / PHONE_RATE,
      });
    }
    offset += pieces[i].length;
  });
  return { audio, speech };
}

/** The line up to its last sound: the end of the audio is then the end of speech. */
export function endOfSpeech(samples: Int16Array): Int16Array {
  let end = samples.length;
  while (end > 0 && Math.abs(samples[end - 1]) < 500) end--;
  return samples.subarray(0, end);
}

/** `ms` of silence at the phone line's 8 kHz. */
export function silence(ms: number): Int16Array {
  return new Int16Array((ms * PHONE_RATE) / 1000);
}

/** The parts one after the other. */
export function concat(...parts: Int16Array[]): Int16Array {
  const all = new Int16Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.length;
  }
  return all;
}
