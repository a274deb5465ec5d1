import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type EndOfTurnRule, TurnDetector } from '../lib/audio/turn-detector.js';
import { levelVoiceActivity } from './support/media-path.js';
import { concat, silence } from './support/test-audio.js';

// End of turn by a model (VOICE_TURN_DETECTION=model, lib/audio/turn-detector.ts), on fakes at its
// ports: speech is a loud tone and silence is silence (the level voice activity of
// test/support/media-path.ts), and the model answers as each test says. After VOICE_TURN_PAUSE_MS
// of silence the model is asked; complete ends the turn, not complete waits up to VOICE_TURN_MAX_MS;
// a model that fails leaves the call to the silence rule (VOICE_ENDPOINTING_MS), told once.

const FRAME = 160; // 20 ms at 8 kHz
const speech = (ms: number) =>
  Int16Array.from({ length: (ms * 8) | 0 }, (_, i) => (i % 32 < 16 ? 8000 : -8000));

/** Feeds the audio frame by frame; when each turn ended (the frame's end, ms) and where it ended (its speech's end). */
async function turnsOf(detector: TurnDetector, audio: Int16Array) {
  const turns: { decidedAtMs: number; endedAtMs: number; audioMs: number }[] = [];
  for (let start = 0; start + FRAME <= audio.length; start += FRAME) {
    const atMs = (start / FRAME) * 20;
    for (const event of await detector.push(audio.subarray(start, start + FRAME), atMs)) {
      if (event.type === 'turn_ended')
        turns.push({ decidedAtMs: atMs + 20, endedAtMs: event.endedAtMs, audioMs: event.audio.length / 8 });
    }
    // The model's answer, when it has one, comes before the next frame (as the network's would, between frames).
    await new Promise((resolve) => setImmediate(resolve));
  }
  return turns;
}

function modelSaying(...answers: (boolean | 'fail' | 'never')[]) {
  const asked: number[] = [];
  const failures: unknown[] = [];
  const rule: EndOfTurnRule = {
    pauseMs: 200,
    maxMs: 2000,
    complete: (audio) => {
      asked.push(audio.length / 8);
      const answer = answers[Math.min(asked.length - 1, answers.length - 1)];
      if (answer === 'fail') return Promise.reject(new Error('the model is gone'));
      if (answer === 'never') return new Promise<boolean>(() => {});
      return Promise.resolve(answer);
    },
    failed: (error) => void failures.push(error),
  };
  return { rule, asked, failures };
}

const detectorWith = (rule: EndOfTurnRule) =>
  new TurnDetector({ vad: levelVoiceActivity, endpointingMs: 600, endOfTurn: rule });

test('complete: the turn ends once the model says so after a 200 ms pause, not after 600 ms of silence', async () => {
  const model = modelSaying(true);
  const turns = await turnsOf(detectorWith(model.rule), concat(silence(400), speech(1200), silence(1500)));
  assert.equal(turns.length, 1);
  const [turn] = turns;
  assert.ok(Math.abs(turn.endedAtMs - 1600) <= 40, `its speech ended at ${turn.endedAtMs} ms`);
  assert.ok(
    turn.decidedAtMs - turn.endedAtMs <= 260,
    `decided ${turn.decidedAtMs - turn.endedAtMs} ms after it`,
  );
  assert.equal(model.asked.length, 1, 'asked once');
  assert.ok(model.asked[0] >= 1200, `the model heard the turn (${model.asked[0]} ms)`);
});

test('not complete: a caller reading out digits with pauses is not cut off; the pauses are asked about, the turn is whole', async () => {
  const model = modelSaying(false, false, true);
  const digits = concat(
    silence(300),
    speech(700), // "nine one two"
    silence(900),
    speech(700), // "three four"
    silence(900),
    speech(500), // "five six"
    silence(1500),
  );
  const turns = await turnsOf(detectorWith(model.rule), digits);
  assert.equal(turns.length, 1, 'one turn, not three');
  assert.equal(model.asked.length, 3, 'each pause was asked about');
  assert.ok(Math.abs(turns[0].endedAtMs - 4000) <= 40, `ended at ${turns[0].endedAtMs}`);
});

test('not complete and no more speech: the turn ends after VOICE_TURN_MAX_MS of silence; a decision that never comes, the same', async () => {
  for (const answer of [false, 'never'] as const) {
    const model = modelSaying(answer);
    const turns = await turnsOf(detectorWith(model.rule), concat(silence(200), speech(800), silence(2600)));
    assert.equal(turns.length, 1, String(answer));
    assert.ok(
      Math.abs(turns[0].decidedAtMs - turns[0].endedAtMs - 2000) <= 40,
      `${answer}: decided ${turns[0].decidedAtMs - turns[0].endedAtMs} ms after the speech`,
    );
  }
});

test('a model that fails: this call’s turns end by 600 ms of silence from then on, it is not asked again, and the failure is told once', async () => {
  const model = modelSaying('fail');
  const turns = await turnsOf(
    detectorWith(model.rule),
    concat(silence(200), speech(800), silence(1200), speech(800), silence(1200)),
  );
  assert.equal(turns.length, 2);
  for (const turn of turns) {
    const after = turn.decidedAtMs - turn.endedAtMs;
    assert.ok(after >= 600 && after <= 640, `decided ${after} ms after the speech`);
  }
  assert.equal(model.asked.length, 1, 'not asked again');
  assert.equal(model.failures.length, 1);
});

test('speech too short to be a turn is not asked about', async () => {
  const model = modelSaying(true);
  const turns = await turnsOf(detectorWith(model.rule), concat(silence(200), speech(60), silence(1000)));
  assert.deepEqual([turns.length, model.asked.length], [0, 0]);
});
