import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FRAME_SAMPLES, piecesStartedBy, samplePlayingAt, toMulawFrames } from '../lib/audio/frame-pacer.js';
import { decodeMulaw } from '../lib/audio/mulaw.js';
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

test('the playback clock tells which sample, and which pieces, had started at a moment', () => {
  const startedAtMs = 10_000;
  assert.equal(samplePlayingAt(startedAtMs, 10_000), 0);
  assert.equal(samplePlayingAt(startedAtMs, 10_020), 160);
  assert.equal(samplePlayingAt(startedAtMs, 11_500), 12_000);
  assert.ok(samplePlayingAt(startedAtMs, 9_990) < 0);

  // Three sentences of 1 s, 0.5 s and 2 s: a barge-in 1.2 s in had heard the first two begin.
  const sentences = [8000, 4000, 16_000];
  assert.equal(piecesStartedBy(sentences, samplePlayingAt(startedAtMs, 9_990)), 0);
  assert.equal(piecesStartedBy(sentences, samplePlayingAt(startedAtMs, 10_000)), 1);
  assert.equal(piecesStartedBy(sentences, samplePlayingAt(startedAtMs, 10_999)), 1);
  assert.equal(piecesStartedBy(sentences, samplePlayingAt(startedAtMs, 11_000)), 2);
  assert.equal(piecesStartedBy(sentences, samplePlayingAt(startedAtMs, 11_200)), 2);
  assert.equal(piecesStartedBy(sentences, samplePlayingAt(startedAtMs, 11_500)), 3);
  assert.equal(piecesStartedBy(sentences, samplePlayingAt(startedAtMs, 60_000)), 3);
});
