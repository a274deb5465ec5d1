import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Beep, BeepDetector, goertzelPower } from '../lib/audio/tone-detector.js';
import { concat, noise, PHONE_RATE, silence, speechFixture, tone } from './support/test-audio.js';

/** Every beep the detector reports for `audio` pushed in frames of `frame` samples. */
function beepsIn(audio: Int16Array, frame = 160, detector = new BeepDetector()): Beep[] {
  const beeps: Beep[] = [];
  for (let start = 0; start < audio.length; start += frame) {
    const beep = detector.push(audio.subarray(start, start + frame));
    if (beep) beeps.push(beep);
  }
  return beeps;
}

/**
 * Voiced speech as a model: a pitch gliding over 90..230 Hz, ten harmonics under a formant that
 * moves, syllables at 4 Hz, over noise.
 */
function speechLike(ms: number, seed: number): Int16Array {
  const length = (ms * PHONE_RATE) / 1000;
  const hiss = noise(length, 800, seed);
  const phases = new Float64Array(11);
  return Int16Array.from({ length }, (_, i) => {
    const t = i / PHONE_RATE;
    const pitch = 160 + 55 * Math.sin(2 * Math.PI * 2.3 * t + seed) + 15 * Math.sin(2 * Math.PI * 0.7 * t);
    const formant = 700 + 250 * Math.sin(2 * Math.PI * 3.1 * t + seed);
    const syllable = 0.3 + 0.7 * Math.abs(Math.sin(2 * Math.PI * 2 * t));
    let value = 0;
    for (let k = 1; k <= 10; k++) {
      phases[k] += (2 * Math.PI * k * pitch) / PHONE_RATE;
      const boost = 1 + 2 * Math.exp(-(((k * pitch - formant) / 150) ** 2));
      value += (boost / k) * Math.sin(phases[k]);
    }
    return Math.round(6000 * syllable * value) + hiss[i];
  });
}

test('goertzelPower gives (A·N/2)² at the tone and next to nothing a kilohertz off', () => {
  const sine = tone(1000, PHONE_RATE, 160, 10_000);
  const expected = ((10_000 * 160) / 2) ** 2;
  assert.ok(Math.abs(goertzelPower(sine, 0, 160, 1000, PHONE_RATE) / expected - 1) < 0.02);
  assert.ok(goertzelPower(sine, 0, 160, 2000, PHONE_RATE) / expected < 0.001);
  // An offset span: the same tone from sample 40 on.
  const later = concat(silence(5), sine);
  assert.ok(Math.abs(goertzelPower(later, 40, 160, 1000, PHONE_RATE) / expected - 1) < 0.02);
});

test('a 0.5 s 1 kHz beep after 1 s of silence is found at 1000..1500 ms', () => {
  const audio = concat(silence(1000), tone(1000, PHONE_RATE, 4000, 8000), silence(500));
  for (const frame of [160, 137, 1000]) {
    const beeps = beepsIn(audio, frame);
    assert.equal(beeps.length, 1, `frames of ${frame}`);
    const [beep] = beeps;
    assert.equal(beep.frequency, 1000);
    assert.ok(Math.abs(beep.startedAtMs - 1000) <= 40, `started at ${beep.startedAtMs}`);
    assert.ok(Math.abs(beep.endedAtMs - 1500) <= 40, `ended at ${beep.endedAtMs}`);
  }
});

test('a beep is reported by the push in which it ends, not before', () => {
  const detector = new BeepDetector();
  assert.equal(detector.push(silence(1000)), null);
  assert.equal(detector.push(tone(850, PHONE_RATE, 4000, 8000)), null);
  const beep = detector.push(silence(100));
  assert.deepEqual(beep && { ...beep, startedAtMs: Math.round(beep.startedAtMs) }, {
    frequency: 850,
    startedAtMs: 1000,
    endedAtMs: 1500,
  });
  assert.equal(detector.push(silence(1000)), null);
});

test('a beep after a spoken greeting, on a noisy line, off the block grid', () => {
  const greeting = speechFixture('confirmation');
  const beepAt = ((greeting.length + 2437) * 1000) / PHONE_RATE;
  const audio = concat(greeting, silence(304.625), tone(440, PHONE_RATE, 2400, 5000), silence(400));
  const line = noise(audio.length, 300, 7);
  for (let i = 0; i < audio.length; i++) audio[i] = Math.max(-32768, Math.min(32767, audio[i] + line[i]));
  const beeps = beepsIn(audio);
  assert.equal(beeps.length, 1);
  assert.equal(beeps[0].frequency, 440);
  assert.ok(Math.abs(beeps[0].startedAtMs - beepAt) <= 40, `${beeps[0].startedAtMs} vs ${beepAt}`);
  assert.ok(Math.abs(beeps[0].endedAtMs - (beepAt + 300)) <= 40, `${beeps[0].endedAtMs}`);
});

test('a 0.1 s blip and a 150 ms tone are not beeps; 200 ms off the grid is', () => {
  assert.deepEqual(beepsIn(concat(silence(500), tone(1000, PHONE_RATE, 800), silence(500))), []);
  assert.deepEqual(beepsIn(concat(silence(500), tone(1000, PHONE_RATE, 1200), silence(500))), []);
  const beeps = beepsIn(concat(silence(507), tone(1000, PHONE_RATE, 1600), silence(500)));
  assert.equal(beeps.length, 1);
});

test('speech-like sound, real speech and white noise hold no beep', () => {
  for (const seed of [1, 2, 3, 4, 5]) assert.deepEqual(beepsIn(speechLike(4000, seed)), [], `seed ${seed}`);
  assert.deepEqual(beepsIn(speechFixture('confirmation')), []);
  assert.deepEqual(beepsIn(speechFixture('order-status')), []);
  assert.deepEqual(beepsIn(noise(5 * PHONE_RATE, 20_000, 3)), []);
  assert.deepEqual(beepsIn(concat(noise(PHONE_RATE, 60, 4), silence(1000))), []);
});

test('a quiet tone under the floor and a line tone longer than 5 s are not beeps', () => {
  assert.deepEqual(beepsIn(concat(tone(1000, PHONE_RATE, 4000, 100), silence(200))), []);
  assert.deepEqual(beepsIn(concat(tone(440, PHONE_RATE, 6 * PHONE_RATE, 8000), silence(200))), []);
  // Shorter runs may be asked for.
  const short = beepsIn(
    concat(tone(1000, PHONE_RATE, 800, 8000), silence(200)),
    160,
    new BeepDetector({ minDurationMs: 80 }),
  );
  assert.equal(short.length, 1);
});
