import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeAlaw, encodeAlaw } from '../lib/audio/alaw.js';
import { decodeMulaw, encodeMulaw } from '../lib/audio/mulaw.js';
import { resample } from '../lib/audio/resample.js';
import { PHONE_RATE, rms, speechFixture, tone, toneAmplitude } from './support/test-audio.js';

/** Signal-to-noise ratio of `copy` against `original`, in dB. */
function snrDb(original: Int16Array, copy: Int16Array): number {
  const error = original.map((sample, i) => sample - copy[i]);
  return 20 * Math.log10(rms(original) / rms(error));
}

const codecs = [
  { name: 'μ-law', encode: encodeMulaw, decode: decodeMulaw },
  { name: 'A-law', encode: encodeAlaw, decode: decodeAlaw },
];

for (const { name, encode, decode } of codecs) {
  test(`${name} keeps a tone and speech at telephone quality (one byte per sample)`, () => {
    for (const amplitude of [500, 5000, 30_000]) {
      const signal = tone(440, PHONE_RATE, PHONE_RATE, amplitude);
      const bytes = encode(signal);
      assert.equal(bytes.length, signal.length);
      const snr = snrDb(signal, decode(bytes));
      // G.711's companding keeps about 38 dB over a wide range of levels.
      assert.ok(snr > 30, `${name} at amplitude ${amplitude}: SNR ${snr.toFixed(1)} dB`);
    }
    // Real speech (the fixture, μ-law from the phone): kept, and a second pass changes nothing.
    const speech = speechFixture('confirmation');
    const once = decode(encode(speech));
    assert.ok(snrDb(speech, once) > 30, `${name} on speech: SNR ${snrDb(speech, once).toFixed(1)} dB`);
    assert.deepEqual(decode(encode(once)), once);
  });
}

test('μ-law silence is 0xFF, the byte a partial frame is padded with', () => {
  assert.deepEqual([...encodeMulaw(new Int16Array(3))], [0xff, 0xff, 0xff]);
  assert.deepEqual([...decodeMulaw(Uint8Array.of(0xff))], [0]);
});

test('resampling 22,050 Hz to 8 kHz keeps a 1 kHz tone and removes a 6 kHz one', () => {
  const rate = 22_050;
  const kept = resample(tone(1000, rate, rate), rate, PHONE_RATE);
  assert.equal(kept.length, PHONE_RATE);
  const keptAmplitude = toneAmplitude(kept, 1000, PHONE_RATE);
  assert.ok(Math.abs(keptAmplitude - 10_000) < 500, `1 kHz at ${keptAmplitude.toFixed(0)} of 10000`);

  // 6 kHz is above the new Nyquist frequency: without a low-pass it would fold to 2 kHz.
  const removed = resample(tone(6000, rate, rate), rate, PHONE_RATE);
  const leftDb = 20 * Math.log10(rms(removed.subarray(800, -800)) / rms(tone(6000, rate, rate)));
  assert.ok(leftDb < -40, `6 kHz left at ${leftDb.toFixed(1)} dB`);
});

test('resampling 8 kHz to 16 kHz doubles the samples and keeps the tone, with nothing above 4 kHz', () => {
  const up = resample(tone(1000, PHONE_RATE, PHONE_RATE), PHONE_RATE, 16_000);
  assert.equal(up.length, 16_000);
  assert.ok(Math.abs(toneAmplitude(up, 1000, 16_000) - 10_000) < 500);
  // The image a naive upsampler leaves at 8 kHz - 1 kHz.
  assert.ok(toneAmplitude(up, 7000, 16_000) < 100);
  const same = tone(1000, PHONE_RATE, 160);
  assert.deepEqual(resample(same, PHONE_RATE, PHONE_RATE), same);
});

test('resampling leaves its input untouched', () => {
  const input = tone(6000, 22_050, 2205);
  const copy = input.slice();
  resample(input, 22_050, PHONE_RATE);
  assert.deepEqual(input, copy);
});
