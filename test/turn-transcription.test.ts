import assert from 'node:assert/strict';
import { test } from 'node:test';
import { localSpeechDoubtsBelow } from '../lib/speech/local-doubt.js';
import { type Pcm, SpeechError, type SpeechToText } from '../lib/speech/speech-ports.js';
import { hearTurn, transcribeTurn } from '../media/turn-transcription.js';

// A speech server that is briefly gone (its supervisor starts it again after a crash) costs the
// turn time, not the call: the gateway tries a passing failure again with a backoff for up to
// 20 s (lib/speech/speech-comes-back.ts); a refusal is not tried again, nor a transcription given up.

/** Speech-to-text that fails with `failures` in order, then hears `words`. */
function flaky(failures: SpeechError[], words = 'hello there'): SpeechToText & { calls: number } {
  const stt = {
    calls: 0,
    async transcribe(_audio: Pcm): Promise<string> {
      stt.calls++;
      const failure = failures.shift();
      if (failure) throw failure;
      return words;
    },
  };
  return stt;
}

const audio = new Int16Array(8000);
const gone = () => new SpeechError('speech-to-text: connection refused', true);

test('a speech server that is down for a moment: the turn is transcribed once it is back', async () => {
  const stt = flaky([gone(), gone(), gone()]);
  const started = Date.now();
  assert.equal(await transcribeTurn(stt, 'en-US', audio), 'hello there');
  assert.equal(stt.calls, 4);
  // Backoffs of 0.5, 1 and 2 s.
  assert.ok(Date.now() - started >= 3_000, `${Date.now() - started} ms`);
});

test('a refusal is not tried again', async () => {
  const stt = flaky([new SpeechError('speech-to-text: 400 bad audio', false)]);
  await assert.rejects(transcribeTurn(stt, 'en-US', audio), /400 bad audio/);
  assert.equal(stt.calls, 1);
});

test('a transcription given up (its turn went on) is not tried again', async () => {
  const stt = flaky([gone()]);
  const given = new AbortController();
  given.abort();
  await assert.rejects(transcribeTurn(stt, 'en-US', audio, given.signal), /connection refused/);
  assert.equal(stt.calls, 1);
});

test('a pause heard scored asks the port for the score, unscored for the words alone; a port without scores gives the words', async () => {
  const asked: string[] = [];
  const scoring: SpeechToText = {
    transcribe: async () => (asked.push('json'), 'The code did not.'),
    transcribeScored: async () => (
      asked.push('verbose_json'), { text: 'The code did not.', avgLogprob: -0.31 }
    ),
  };
  assert.deepEqual(await hearTurn(scoring, 'en-US', audio, { scored: true }), {
    text: 'The code did not.',
    avgLogprob: -0.31,
  });
  assert.deepEqual(await hearTurn(scoring, 'en-US', audio), { text: 'The code did not.' });
  assert.deepEqual(asked, ['verbose_json', 'json']);
  assert.deepEqual(await hearTurn(flaky([]), 'en-US', audio, { scored: true }), { text: 'hello there' });
});

test('the local speech’s threshold is tiny.en’s: English only', () => {
  assert.equal(localSpeechDoubtsBelow('en-US'), -0.26);
  assert.equal(localSpeechDoubtsBelow('en'), -0.26);
  for (const language of ['nb-NO', 'sv-SE', 'de']) assert.equal(localSpeechDoubtsBelow(language), undefined);
});
