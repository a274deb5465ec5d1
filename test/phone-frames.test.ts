import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeMulaw } from '../lib/audio/mulaw.js';
import { FRAME_SAMPLES, toMulawFrames } from '../lib/audio/phone-frames.js';
import { tone } from './support/test-audio.js';

test('agent audio of any length becomes 160-byte μ-law frames, the last padded with silence', () => {
  const audio = tone(440, 8000, 1000);
  const frames = toMulawFrames(audio);
  assert.equal(FRAME_SAMPLES, 160);
  assert.equal(frames.length, 7);
  assert.ok(frames.every((frame) => frame.length === 160));
  const decoded = frames.map((frame) => decodeMulaw(frame));
  // The audio comes back in order (within μ-law's step) and the padding is silence.
  for (let i = 0; i < audio.length; i++) {
    const sample = decoded[Math.floor(i / 160)][i % 160];
    assert.ok(Math.abs(sample - audio[i]) <= Math.abs(audio[i]) / 16 + 8, `sample ${i}`);
  }
  assert.deepEqual([...decoded[6].subarray(1000 - 960)], new Array(120).fill(0));
  assert.deepEqual(toMulawFrames(new Int16Array(0)), []);
  assert.equal(toMulawFrames(new Int16Array(320)).length, 2);
});
