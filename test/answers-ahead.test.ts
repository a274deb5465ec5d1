import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { AnswersAhead } from '../lib/voice-runtime/answers-ahead.js';
import {
  type AgentTurn,
  type ConversationContext,
  type RespondOptions,
  type VoiceRuntime,
  VoiceRuntimeError,
} from '../lib/voice-runtime/voice-runtime.js';

// Preemptive generation (lib/voice-runtime/answers-ahead.ts): an answer begun during the person's
// pause is the turn's only when the turn asks exactly the same, and is aborted otherwise.

const context = { agent: { id: 'agt_1' } } as unknown as ConversationContext;
const lines = (...texts: string[]): TranscriptLine[] =>
  texts.map((text, index) => ({ index, role: index % 2 ? 'caller' : 'agent', text, offsetSeconds: index }));

/** A model that streams its two sentences `gapMs` apart after `firstMs`, and stops when aborted. */
function streamingModel(firstMs = 40, gapMs = 40) {
  const model = {
    asked: [] as string[],
    aborted: [] as string[],
    async openingLine() {
      return null;
    },
    async respond(_context: ConversationContext, transcript: TranscriptLine[], options: RespondOptions = {}) {
      const heard = transcript.at(-1)!.text;
      model.asked.push(heard);
      const wait = (ms: number) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          options.signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            model.aborted.push(heard);
            reject(new VoiceRuntimeError('the request was aborted', true));
          });
        });
      await wait(firstMs);
      options.onSentence?.(`You said ${heard}`);
      await wait(gapMs);
      options.onSentence?.('Anything else?');
      return {
        say: `You said ${heard} Anything else?`,
        next: { kind: 'continue' },
        timing: { firstTokenMs: firstMs, answerMs: firstMs + gapMs },
      } satisfies AgentTurn;
    },
  };
  return model;
}

test('asked the same: one request, the sentences made so far at once and the rest as they come, the wait before not counted', async () => {
  const model = streamingModel(30, 120);
  const ahead = new AnswersAhead(model as VoiceRuntime);
  ahead.begin(context, lines('Hello.', 'A table for two.'));
  await sleep(80); // the first sentence is made, the second not yet
  const heard: string[] = [];
  const turn = await ahead.runtime.respond(context, lines('Hello.', 'A table for two.'), {
    onSentence: (sentence) => heard.push(sentence),
  });
  assert.deepEqual(model.asked, ['A table for two.']);
  assert.deepEqual(heard, ['You said A table for two.', 'Anything else?']);
  assert.equal(turn.say, 'You said A table for two. Anything else?');
  // The first token came before the turn asked: 0 on the turn's clock; the rest of the answer after.
  assert.equal(turn.timing?.firstTokenMs, 0);
  assert.ok(
    turn.timing && turn.timing.answerMs > 0 && turn.timing.answerMs <= 150 - 80 + 30,
    JSON.stringify(turn.timing),
  );
  assert.deepEqual(ahead.counts, { taken: 1, dropped: 0 });
});

test('asked something else: the answer begun ahead is aborted and the model asked anew', async () => {
  const model = streamingModel();
  const ahead = new AnswersAhead(model as VoiceRuntime);
  ahead.begin(context, lines('Hello.', 'A table'));
  const turn = await ahead.runtime.respond(context, lines('Hello.', 'A table for two on Friday.'));
  assert.equal(turn.say, 'You said A table for two on Friday. Anything else?');
  assert.deepEqual(model.asked, ['A table', 'A table for two on Friday.']);
  assert.deepEqual(model.aborted, ['A table']);
  assert.deepEqual(ahead.counts, { taken: 0, dropped: 1 });
});

test('the same words with other tool results, or at another index, are another request', async () => {
  const model = streamingModel(5, 5);
  const ahead = new AnswersAhead(model as VoiceRuntime);
  ahead.begin(context, lines('Hello.', 'Where is my order?'));
  await ahead.runtime.respond(context, lines('Hello.', 'Where is my order?'), {
    toolExchanges: [{ id: 'tc_1', name: 'lookup', arguments: '{}', result: '{}', afterLineIndex: 1 }],
  });
  const shifted = lines('Hello.', 'Where is my order?').map((line) => ({ ...line, index: line.index + 2 }));
  ahead.begin(context, lines('Hello.', 'Where is my order?'));
  await ahead.runtime.respond(context, shifted);
  assert.equal(model.asked.length, 4);
  assert.deepEqual(ahead.counts, { taken: 0, dropped: 2 });
});

test('dropped when the person goes on: the request is aborted; the turn aborting a taken answer aborts its request', async () => {
  const model = streamingModel(200, 200);
  const ahead = new AnswersAhead(model as VoiceRuntime);
  ahead.begin(context, lines('Hello.', 'I would like'));
  ahead.drop();
  await sleep(10);
  assert.deepEqual(model.aborted, ['I would like']);

  ahead.begin(context, lines('Hello.', 'Cancel it.'));
  const turnAborted = new AbortController();
  const answer = ahead.runtime.respond(context, lines('Hello.', 'Cancel it.'), {
    signal: turnAborted.signal,
  });
  turnAborted.abort();
  await assert.rejects(answer, VoiceRuntimeError);
  assert.deepEqual(model.aborted, ['I would like', 'Cancel it.']);
  assert.deepEqual(ahead.counts, { taken: 1, dropped: 1 });
});

test('a runtime that gives its sentences before it returns (the scripted agent) is taken whole', async () => {
  const immediate: VoiceRuntime = {
    async openingLine() {
      return null;
    },
    respond(_context, _transcript, options = {}) {
      options.onSentence?.('Right away.');
      return Promise.resolve({ say: 'Right away.', next: { kind: 'continue' } });
    },
  };
  const ahead = new AnswersAhead(immediate);
  ahead.begin(context, lines('Hello.', 'Now, please.'));
  const heard: string[] = [];
  const turn = await ahead.runtime.respond(context, lines('Hello.', 'Now, please.'), {
    onSentence: (sentence) => heard.push(sentence),
  });
  assert.deepEqual(heard, ['Right away.']);
  assert.equal(turn.say, 'Right away.');
  assert.equal(turn.timing, undefined);
});

test('a signal that outlives the turns (the call’s own) keeps no listener of the answers it was given', async () => {
  const model = streamingModel(1, 1);
  const ahead = new AnswersAhead(model as VoiceRuntime);
  const call = new AbortController();
  for (let i = 0; i < 20; i++) {
    ahead.begin(context, lines('Hello.', `Question ${i}`));
    await ahead.runtime.respond(context, lines('Hello.', `Question ${i}`), { signal: call.signal });
  }
  assert.deepEqual(ahead.counts, { taken: 20, dropped: 0 });
  assert.equal(getEventListeners(call.signal, 'abort').length, 0);
});
