import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type EndOfTurnRule,
  type Pause,
  PauseVerdict,
  type WordsVerdict,
} from '../lib/audio/pause-verdict.js';

// One pause's end-of-turn decision (lib/audio/pause-verdict.ts) at its port: the model's and the
// words' answers, and the silence that ends the turn given them (docs/voice.md, "End of turn by a
// model", the table). The detector's use of it, frame by frame, is in test/end-of-turn-model.test.ts.

const PAUSE = { startedAtMs: 0, endedAtMs: 1500 };
const settle = () => new Promise((resolve) => setImmediate(resolve));

function rule(model: Promise<boolean>, words?: EndOfTurnRule['words']): EndOfTurnRule {
  return { complete: () => model, ...(words ? { words } : {}), pauseMs: 200, maxMs: 2000 };
}

async function silenceAfter(complete: boolean, words: WordsVerdict | null | 'no rule'): Promise<number> {
  const asked = words === 'no rule' ? undefined : () => (words === null ? null : Promise.resolve(words));
  const verdict = new PauseVerdict(rule(Promise.resolve(complete), asked), new Int16Array(160), () => {});
  verdict.askWords(PAUSE);
  await settle();
  return verdict.endingSilenceMs();
}

test('the silence that ends the turn, for each answer of the model and of the words', async () => {
  const table: [boolean, WordsVerdict | null | 'no rule', number][] = [
    [true, 'finished', 200],
    [true, 'unsure', 1100], // one doubt: halfway to VOICE_TURN_MAX_MS
    [true, 'unfinished', 2000],
    [true, null, 200], // no words: the model alone
    [true, 'no rule', 200],
    [false, 'finished', 1100], // the model's doubt of finished words: halfway
    [false, 'unsure', 2000], // both doubt
    [false, 'unfinished', 2000],
    [false, null, 2000],
    [false, 'no rule', 2000],
  ];
  for (const [complete, words, silenceMs] of table) {
    assert.equal(await silenceAfter(complete, words), silenceMs, `model ${complete}, words ${words}`);
  }
});

test('answers not yet in wait VOICE_TURN_MAX_MS; a transcription that fails leaves it to the model', async () => {
  let answer!: (complete: boolean) => void;
  let words!: (verdict: WordsVerdict) => void;
  const verdict = new PauseVerdict(
    rule(
      new Promise((resolve) => {
        answer = resolve;
      }),
      () =>
        new Promise((resolve) => {
          words = resolve;
        }),
    ),
    new Int16Array(160),
    () => {},
  );
  assert.equal(verdict.endingSilenceMs(), 2000, 'nothing in');
  answer(true);
  await settle();
  assert.equal(verdict.endingSilenceMs(), 2000, 'the words not asked yet: a rule with words waits for them');
  verdict.askWords(PAUSE);
  assert.equal(verdict.endingSilenceMs(), 2000, 'the words on their way');
  words('finished');
  await settle();
  assert.equal(verdict.endingSilenceMs(), 200);

  const failing = new PauseVerdict(
    rule(Promise.resolve(true), () => Promise.reject(new Error('speech server down'))),
    new Int16Array(160),
    () => {},
  );
  failing.askWords(PAUSE);
  await settle();
  assert.equal(failing.endingSilenceMs(), 200, 'no words: the model’s yes ends it');
});

test('the words are asked once a pause, with the pause; a model that fails is told to the detector', async () => {
  const asked: Pause[] = [];
  const failures: unknown[] = [];
  const error = new Error('model down');
  const verdict = new PauseVerdict(
    rule(Promise.reject(error), (pause) => {
      asked.push(pause);
      return Promise.resolve('finished');
    }),
    new Int16Array(160),
    (failure) => failures.push(failure),
  );
  verdict.askWords(PAUSE);
  verdict.askWords({ startedAtMs: 0, endedAtMs: 1600 });
  await settle();
  assert.deepEqual(asked, [PAUSE]);
  assert.deepEqual(failures, [error]);
  assert.equal(
    verdict.endingSilenceMs(),
    2000,
    'no answer from the model: the turn waits, the detector falls back',
  );
});
