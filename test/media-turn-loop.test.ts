import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { EntityManager } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError } from '@temporalio/client';
import { defineSignal } from '@temporalio/workflow';
import { TranscriptEntry } from '../db/entities/index.js';
import type { TranscriptLine } from '../lib/calls/transcript.js';
import { recordLines } from '../lib/calls/transcript-rows.js';
import { createLogger } from '../lib/logger.js';
import { metricsRegistry } from '../lib/metrics/service-metrics.js';
import type { CallerSpeech } from '../lib/temporal/call-messages.js';
import {
  type AgentTurn,
  type RespondOptions,
  type VoiceRuntime,
  VoiceRuntimeError,
} from '../lib/voice-runtime/voice-runtime.js';
import { TurnLoop } from '../media/turn-loop.js';
import { WorkflowOutbox } from '../media/workflow-outbox.js';
import { type AgentFixture, createAgentFixture, createQueuedCall } from './support/call-fixtures.js';
import { freshDatabase, type TestDatabase } from './support/database.js';

// The media gateway's turn loop (media/turn-loop.ts) on a real PostgreSQL with a voice runtime
// that answers, fails or refuses as the test says, and the outbox that tells the call workflow
// (media/workflow-outbox.ts) against a Temporal client that fails the ways a restarting server does.

let db: TestDatabase;
let agent: AgentFixture;

before(async () => {
  db = await freshDatabase();
  agent = await createAgentFixture(db.orm, { firstMessage: 'Hello, Acme.' });
});
after(async () => {
  await db?.close();
});

/** A voice runtime whose turns are the test's: each `respond` takes the next of `answers`. */
function runtimeOf(answers: (AgentTurn | Error)[]): VoiceRuntime & { asked: number; heard: string[][] } {
  const runtime = {
    asked: 0,
    /** The transcript each request was given, as `role: text`. */
    heard: [] as string[][],
    async openingLine() {
      return null;
    },
    async respond(
      _context: unknown,
      transcript: TranscriptLine[],
      options: RespondOptions = {},
    ): Promise<AgentTurn> {
      runtime.heard.push(transcript.map((line) => `${line.role}: ${line.text}`));
      const answer = answers[Math.min(runtime.asked++, answers.length - 1)];
      if (answer instanceof Error) throw answer;
      for (const sentence of answer.say.match(/[^.!?]+[.!?]/g) ?? []) options.onSentence?.(sentence.trim());
      return answer;
    },
  };
  return runtime as unknown as VoiceRuntime & { asked: number; heard: string[][] };
}

async function loopFor(runtime: VoiceRuntime) {
  const call = await createQueuedCall(db.orm, agent, { to: '+4790001111' });
  const spoken: { kind: 'sentence' | 'say'; index: number; text: string }[] = [];
  const loop = new TurnLoop({
    callId: call.id,
    em: () => db.orm.em.fork() as EntityManager,
    voiceRuntime: runtime,
    logger: createLogger('error'),
    signal: new AbortController().signal,
    sleep: async () => {},
    carrier: {
      saySentence: async ({ index, text }) => {
        spoken.push({ kind: 'sentence', index, text });
      },
      say: async ({ index, text }) => {
        spoken.push({ kind: 'say', index, text });
        return { firstAudioAt: Date.now() };
      },
    },
  });
  return { callId: call.id, loop, spoken };
}

const speech = (utterance: number, text: string): CallerSpeech => ({
  utterance,
  text,
  startedAtSeconds: 3 + utterance * 5,
  endedAtSeconds: 5 + utterance * 5,
});

async function linesOf(callId: string) {
  const rows = await db.orm.em.fork().find(TranscriptEntry, { call: callId }, { orderBy: { index: 'asc' } });
  return rows.map((row) => [row.index, row.role, row.text]);
}

describe('the turn loop in the gateway', () => {
  test('taken only when every line the gateway sent has reached the workflow', async () => {
    const { loop } = await loopFor(runtimeOf([]));
    const handOver = { type: 'take_turns', nextIndex: 1, withStoredToolCalls: false } as const;
    assert.equal(loop.take({ ...handOver, heardThrough: 1 }, 2), 'not_now');
    assert.equal(loop.holding, false);
    assert.equal(loop.take({ ...handOver, heardThrough: 2 }, 2), 'taken');
    assert.equal(loop.holding, true);
  });

  test('a turn: both lines written at the indices handed over, the answer spoken sentence by sentence, the turns kept', async () => {
    const runtime = runtimeOf([{ say: 'Of course. Which day suits you?', next: { kind: 'continue' } }]);
    const { callId, loop, spoken } = await loopFor(runtime);
    loop.take({ type: 'take_turns', nextIndex: 1, heardThrough: -1, withStoredToolCalls: false }, -1);
    const taken = await loop.turn(speech(0, 'I would like to book a table.'));
    assert.equal(taken.utterance, 0);
    assert.deepEqual(taken.heard, {
      index: 1,
      role: 'caller',
      text: 'I would like to book a table.',
      offsetSeconds: 3,
    });
    assert.equal(taken.result?.line?.index, 2);
    assert.deepEqual(taken.result?.next, { kind: 'continue' });
    assert.deepEqual(
      spoken.map((s) => [s.kind, s.index, s.text]),
      [
        ['sentence', 2, 'Of course.'],
        ['sentence', 2, 'Which day suits you?'],
        ['say', 2, 'Of course. Which day suits you?'],
      ],
    );
    assert.deepEqual(await linesOf(callId), [
      [1, 'caller', 'I would like to book a table.'],
      [2, 'agent', 'Of course. Which day suits you?'],
    ]);
    assert.equal(loop.holding, true, 'a plain answer keeps the turns here');
    // The person spoke over the answer after its first sentence: the model is shown what was heard.
    const next = await loop.turn({
      ...speech(1, 'Friday.'),
      interrupted: { index: 2, spokenText: 'Of course.' },
    });
    assert.equal(next.heard.index, 3, 'the next line follows the answer');
    assert.deepEqual(runtime.heard[1], [
      'caller: I would like to book a table.',
      'agent: Of course.',
      'caller: Friday.',
    ]);
    assert.deepEqual((await linesOf(callId))[1], [2, 'agent', 'Of course.']);
  });

  test('passing failures are retried within the turn; a refusal is not: the person’s line is kept and the turns go back', async () => {
    const flaky = runtimeOf([
      new VoiceRuntimeError('429 from the model', true, 10),
      { say: 'Sure.', next: { kind: 'continue' } },
    ]);
    const first = await loopFor(flaky);
    first.loop.take({ type: 'take_turns', nextIndex: 0, heardThrough: -1, withStoredToolCalls: false }, -1);
    const answered = await first.loop.turn(speech(0, 'Hello?'));
    assert.equal(flaky.asked, 2);
    assert.equal(answered.result?.line?.text, 'Sure.');
    assert.deepEqual(await linesOf(first.callId), [
      [0, 'caller', 'Hello?'],
      [1, 'agent', 'Sure.'],
    ]);

    const refusing = runtimeOf([new VoiceRuntimeError('401 from the model', false)]);
    const second = await loopFor(refusing);
    second.loop.take({ type: 'take_turns', nextIndex: 0, heardThrough: -1, withStoredToolCalls: false }, -1);
    const failed = await second.loop.turn(speech(0, 'Hello?'));
    assert.equal(refusing.asked, 1, 'a refusal is not retried');
    assert.equal(failed.result, null);
    assert.equal(second.loop.holding, false);
    assert.deepEqual(await linesOf(second.callId), [[0, 'caller', 'Hello?']]);
  });

  test('a turn that needs the workflow hands the turns back: the agent’s tools, a transfer, a hang-up', async () => {
    for (const answer of [
      { say: '', next: { kind: 'continue' }, toolCalls: [{ name: 'check_slots', arguments: '{}' }] },
      { say: 'Putting you through.', next: { kind: 'transfer', to: '+4790000000' } },
      { say: 'Goodbye!', next: { kind: 'hang_up' } },
    ] satisfies AgentTurn[]) {
      const { loop } = await loopFor(runtimeOf([answer]));
      loop.take({ type: 'take_turns', nextIndex: 1, heardThrough: -1, withStoredToolCalls: false }, -1);
      const taken = await loop.turn(speech(0, 'Something.'));
      assert.deepEqual(taken.result?.next, answer.next);
      assert.equal(loop.holding, false, JSON.stringify(answer));
    }
  });
});

test('the turns handed back and taken again: the lines the workflow wrote meanwhile are read again', async () => {
  const runtime = runtimeOf([
    { say: '', next: { kind: 'continue' }, toolCalls: [{ name: 'check_slots', arguments: '{}' }] },
    { say: 'See you then.', next: { kind: 'continue' } },
  ]);
  const { callId, loop } = await loopFor(runtime);
  loop.take({ type: 'take_turns', nextIndex: 0, heardThrough: -1, withStoredToolCalls: false }, -1);
  await loop.turn(speech(0, 'Any slots on Friday?'));
  assert.equal(loop.holding, false);
  // The workflow ran the tool and said the answer with its result.
  await recordLines(db.orm.em.fork() as EntityManager, callId, [
    { index: 1, role: 'agent', text: 'Friday at seven is free.', offsetSeconds: 6 },
  ]);
  loop.take({ type: 'take_turns', nextIndex: 2, heardThrough: 0, withStoredToolCalls: true }, 0);
  await loop.turn(speech(1, 'Book it.'));
  assert.deepEqual(runtime.heard[1], [
    'caller: Any slots on Friday?',
    'agent: Friday at seven is free.',
    'caller: Book it.',
  ]);
});

describe('the answer asked for during the person’s pause (preemptive generation)', () => {
  test('the turn ending with the same words takes it: the model asked once, both lines written and spoken as always', async () => {
    const runtime = runtimeOf([{ say: 'Of course. Which day?', next: { kind: 'continue' } }]);
    const { callId, loop, spoken } = await loopFor(runtime);
    await loop.prepare({ text: 'A table, please.', startedAtSeconds: 3 });
    assert.equal(runtime.asked, 0, 'nothing is asked before the turns are the gateway’s');
    loop.take({ type: 'take_turns', nextIndex: 1, heardThrough: -1, withStoredToolCalls: true }, -1);
    await loop.prepare({ text: 'A table, please.', startedAtSeconds: 3 });
    assert.equal(runtime.asked, 1);
    assert.deepEqual(await linesOf(callId), [], 'nothing is written ahead');
    assert.equal(spoken.length, 0, 'nothing is spoken ahead');

    const taken = await loop.turn(speech(0, 'A table, please.'));
    assert.equal(runtime.asked, 1, 'the turn took the answer begun ahead');
    assert.deepEqual(loop.answersAhead, { taken: 1, dropped: 0 });
    assert.equal(taken.result?.line?.text, 'Of course. Which day?');
    assert.deepEqual(
      spoken.map((s) => [s.kind, s.index, s.text]),
      [
        ['sentence', 2, 'Of course.'],
        ['sentence', 2, 'Which day?'],
        ['say', 2, 'Of course. Which day?'],
      ],
    );
    assert.deepEqual(await linesOf(callId), [
      [1, 'caller', 'A table, please.'],
      [2, 'agent', 'Of course. Which day?'],
    ]);
  });

  test('nothing is asked ahead while a turn is being answered (its request would be a second one)', async () => {
    let release!: () => void;
    const answered = new Promise<void>((resolve) => (release = resolve));
    const runtime = runtimeOf([{ say: 'One moment.', next: { kind: 'continue' } }]);
    const slow: VoiceRuntime = {
      openingLine: () => runtime.openingLine({} as never),
      respond: async (context, transcript, options) => {
        await answered;
        return runtime.respond(context, transcript, options);
      },
    };
    const { loop } = await loopFor(slow);
    loop.take({ type: 'take_turns', nextIndex: 1, heardThrough: -1, withStoredToolCalls: false }, -1);
    const turn = loop.turn(speech(0, 'Is it open?'));
    await loop.prepare({ text: 'Is it open?', startedAtSeconds: 3 });
    release();
    await turn;
    assert.equal(runtime.asked, 1);
    assert.deepEqual(loop.answersAhead, { taken: 0, dropped: 0 });
  });

  test('the person went on: the turn asks again with the whole line', async () => {
    const runtime = runtimeOf([
      { say: 'For how many?', next: { kind: 'continue' } },
      { say: 'Friday it is.', next: { kind: 'continue' } },
    ]);
    const { callId, loop } = await loopFor(runtime);
    loop.take({ type: 'take_turns', nextIndex: 1, heardThrough: -1, withStoredToolCalls: false }, -1);
    await loop.prepare({ text: 'A table', startedAtSeconds: 3 });
    const taken = await loop.turn(speech(0, 'A table on Friday.'));
    assert.equal(runtime.asked, 2);
    assert.deepEqual(runtime.heard[1], ['caller: A table on Friday.']);
    assert.deepEqual(loop.answersAhead, { taken: 0, dropped: 1 });
    assert.equal(taken.result?.line?.text, 'Friday it is.', 'the answer to the whole line');
    assert.deepEqual(await linesOf(callId), [
      [1, 'caller', 'A table on Friday.'],
      [2, 'agent', 'Friday it is.'],
    ]);
  });
});

describe('what the gateway tells the call workflow', () => {
  const said = defineSignal<[string]>('said');

  function temporalThat(fail: (attempt: number, word: string) => Error | null) {
    const delivered: string[] = [];
    const attempts = new Map<string, number>();
    const temporal = {
      workflow: {
        getHandle: () => ({
          async signal(_signal: unknown, word: string) {
            const attempt = (attempts.get(word) ?? 0) + 1;
            attempts.set(word, attempt);
            const error = fail(attempt, word);
            if (error) throw error;
            delivered.push(word);
          },
        }),
      },
    };
    return { temporal: temporal as never, delivered, attempts };
  }

  test('in order and whole through a Temporal that cannot be reached for a while', async () => {
    const unavailable = temporalThat((attempt, word) =>
      word === 'first' && attempt <= 3 ? new Error('14 UNAVAILABLE: connection refused') : null,
    );
    const waits: number[] = [];
    const outbox = new WorkflowOutbox({
      temporal: unavailable.temporal,
      workflowId: () => 'call-1',
      callId: '1',
      logger: createLogger('error'),
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const retriesBefore = await metricValue('media_outbox_retries_total');
    const backlogBefore = await metricValue('media_outbox_backlog');
    void outbox.send(said, 'first');
    void outbox.send(said, 'second');
    const third = outbox.send(said, 'third');
    // The gateway's metrics: three signals wait, then none; three retries.
    assert.equal((await metricValue('media_outbox_backlog')) - backlogBefore, 3);
    await third;
    assert.deepEqual(unavailable.delivered, ['first', 'second', 'third']);
    assert.deepEqual(waits, [200, 400, 800], 'backing off');
    assert.equal(await metricValue('media_outbox_backlog'), backlogBefore);
    assert.equal((await metricValue('media_outbox_retries_total')) - retriesBefore, 3);
  });

  test('a call workflow that is over ends it: nothing more is sent', async () => {
    const over = temporalThat((_attempt, word) =>
      word === 'second'
        ? new WorkflowNotFoundError('workflow execution already completed', 'call-1', undefined)
        : null,
    );
    const outbox = new WorkflowOutbox({
      temporal: over.temporal,
      workflowId: () => 'call-1',
      callId: '1',
      logger: createLogger('error'),
      sleep: async () => {},
    });
    void outbox.send(said, 'first');
    void outbox.send(said, 'second');
    await outbox.send(said, 'third');
    assert.deepEqual(over.delivered, ['first']);
    assert.equal(over.attempts.get('second'), 1, 'not retried');
    assert.equal(over.attempts.get('third'), undefined);
  });

  test('before the call is taken there is no workflow to tell', async () => {
    const never = temporalThat(() => null);
    const outbox = new WorkflowOutbox({
      temporal: never.temporal,
      workflowId: () => null,
      callId: '1',
      logger: createLogger('error'),
    });
    await outbox.send(said, 'first');
    assert.deepEqual(never.delivered, []);
  });
});

/** A metric's value (summed over its labels) in this process's registry. */
async function metricValue(name: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric(name)?.get();
  return (metric?.values ?? []).reduce((sum, value) => sum + value.value, 0);
}
