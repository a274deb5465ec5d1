import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DTMF_DIGITS, DtmfDetector, dtmfTones } from '../lib/audio/dtmf.js';
import { decodeMulaw, encodeMulaw } from '../lib/audio/mulaw.js';
import { concat, noise, PHONE_RATE, speechFixture, toneAmplitude } from './support/test-audio.js';

/** The keys the detector finds in `audio` pushed in frames of `frame` samples. */
function detect(audio: Int16Array, frame = 160): string {
  const detector = new DtmfDetector();
  const digits: string[] = [];
  for (let start = 0; start < audio.length; start += frame) {
    digits.push(...detector.push(audio.subarray(start, start + frame)));
  }
  return digits.join('');
}

test('dtmfTones lays out tone, gap and pause, at the two frequencies, without clipping', () => {
  assert.equal(dtmfTones('1').length, 160 * 8);
  assert.equal(dtmfTones('1w2').length, 2 * 160 * 8 + 500 * 8);
  assert.equal(dtmfTones('5', { toneMs: 50, gapMs: 0, sampleRate: 16_000 }).length, 800);
  assert.equal(dtmfTones('').length, 0);
  const five = dtmfTones('5').subarray(0, 800);
  // -7 dBFS each: 32767 × 0.447.
  assert.ok(Math.abs(toneAmplitude(five, 770, PHONE_RATE) - 14_622) < 300);
  assert.ok(Math.abs(toneAmplitude(five, 1336, PHONE_RATE) - 14_622) < 300);
  // The neighbouring row, 73 Hz off, only as leakage of a 100 ms tone.
  assert.ok(toneAmplitude(five, 697, PHONE_RATE) < 1500);
  const all = dtmfTones(DTMF_DIGITS);
  assert.ok(Math.max(...all.map(Math.abs)) < 32_000);
  assert.ok(
    dtmfTones('1')
      .subarray(800)
      .every((sample) => sample === 0),
  );
});

test('dtmfTones refuses what is not a key or a pause', () => {
  for (const digits of ['12x', ',', '1 2', 'W', 'a']) {
    assert.throws(() => dtmfTones(digits), RangeError, digits);
  }
  assert.throws(() => dtmfTones('1', { toneMs: -1 }), RangeError);
});

test('the detector gives back the digits dtmfTones made, in order, the pause giving nothing', () => {
  const audio = dtmfTones('1234567890*#w5');
  for (const frame of [160, 77, audio.length])
    assert.equal(detect(audio, frame), '1234567890*#5', `frames of ${frame}`);
  assert.equal(detect(dtmfTones('ABCD')), 'ABCD');
});

test('the round trip holds through μ-law, over line noise', () => {
  const tones = dtmfTones('1234567890*#w5');
  assert.equal(detect(decodeMulaw(encodeMulaw(tones))), '1234567890*#5');
  const line = noise(tones.length, 1000, 9);
  const noisy = tones.map((sample, i) => Math.max(-32768, Math.min(32767, sample + line[i])));
  assert.equal(detect(decodeMulaw(encodeMulaw(noisy))), '1234567890*#5');
});

test('a key pressed again counts again; a held key counts once', () => {
  assert.equal(detect(dtmfTones('5511w1')), '55111');
  assert.equal(detect(concat(dtmfTones('7', { toneMs: 3000 }), dtmfTones('7'))), '77');
});

test('a pair of 40 ms counts, one of 20 ms does not, wherever it falls in the frames', () => {
  for (const lead of [0, 13, 27, 33]) {
    const silence = new Int16Array(lead);
    assert.equal(detect(concat(silence, dtmfTones('369', { toneMs: 40, gapMs: 45 }))), '369', `lead ${lead}`);
    assert.equal(detect(concat(silence, dtmfTones('369', { toneMs: 20, gapMs: 45 }))), '', `lead ${lead}`);
  }
});

test('silence, white noise and speech give nothing', () => {
  assert.equal(detect(new Int16Array(2 * PHONE_RATE)), '');
  assert.equal(detect(noise(5 * PHONE_RATE, 20_000, 5)), '');
  assert.equal(detect(noise(5 * PHONE_RATE, 300, 6)), '');
  assert.equal(detect(speechFixture('confirmation')), '');
  assert.equal(detect(speechFixture('order-status')), '');
});

test('twist: a pair with its tones 12 dB apart is not a key', () => {
  const samples = Int16Array.from({ length: 800 }, (_, i) =>
    Math.round(
      16_000 * Math.sin((2 * Math.PI * 697 * i) / PHONE_RATE) +
        4000 * Math.sin((2 * Math.PI * 1209 * i) / PHONE_RATE),
    ),
  );
  assert.equal(detect(concat(samples, new Int16Array(800))), '');
});
