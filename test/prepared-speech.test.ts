import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Call } from '../db/entities/index.js';
import { createLogger } from '../lib/logger.js';
import type { Pcm, SpeechVoice, TextToSpeech } from '../lib/speech/speech-ports.js';
import { ScriptedAgent } from '../lib/voice-runtime/scripted-agent.js';
import type { VoiceRuntime } from '../lib/voice-runtime/voice-runtime.js';
import { AgentVoice } from '../media/agent-voice.js';
import { openingToPrepare, PreparedSpeech } from '../media/prepared-speech.js';
import { until } from './support/wait-for.js';

// The first line without delay (media/prepared-speech.ts): the opening line's sentences are
// synthesised when the call's stream starts, so when the agent says it its audio leaves at once.
// Asserted against a text-to-speech whose latency the test sets (0.8 s a sentence), never a model's.

const TTS_MS = 800;

/** Text-to-speech that takes TTS_MS a sentence; `failing` fails the next requests, `failingOnce` those texts' next one. */
class SlowTextToSpeech implements TextToSpeech {
  readonly requests: string[] = [];
  failing = 0;
  readonly failingOnce = new Set<string>();
  constructor(private readonly ms = TTS_MS) {}
  async synthesize(text: string): Promise<Pcm> {
    this.requests.push(text);
    await new Promise((resolve) => setTimeout(resolve, this.ms));
    if (this.failing > 0 || this.failingOnce.delete(text)) {
      this.failing = Math.max(0, this.failing - 1);
      throw new Error('the speech service failed');
    }
    return { sampleRate: 8000, samples: new Int16Array(1600).fill(2000) };
  }
  async voices(): Promise<SpeechVoice[]> {
    return [];
  }
}

function voiceOn(tts: TextToSpeech, speech?: PreparedSpeech, english?: { marks: string[] }) {
  const t0 = performance.now();
  return new AgentVoice({
    tts,
    voice: 'joe',
    ...(speech ? { speech } : {}),
    ...(english ? { language: 'en-US' } : {}),
    out: { media: () => {}, mark: (name) => english?.marks.push(name), clear: () => {} },
    clock: () => performance.now() - t0,
    recording: null,
    logger: createLogger('error', { write: () => {} }),
  });
}

const OPENING = 'Hi, this is Ada from Acme. How can I help you today?';

test('an opening made ahead leaves as soon as it is said; made when said, it waits for the synthesis', async () => {
  const tts = new SlowTextToSpeech();
  const speech = new PreparedSpeech(tts, 'joe');
  speech.prepare(OPENING);
  assert.equal(speech.prepared, 2, 'both sentences are being made');
  const prepared = voiceOn(tts, speech);
  // The call is answered and the workflow connects the agent meanwhile.
  await new Promise((resolve) => setTimeout(resolve, TTS_MS + 200));
  const saidAt = Date.now();
  const { firstAudioAt } = await prepared.say(0, OPENING);
  assert.ok(
    firstAudioAt !== null && firstAudioAt - saidAt < TTS_MS / 2,
    `first audio ${firstAudioAt! - saidAt} ms after`,
  );
  assert.deepEqual(
    tts.requests,
    ['Hi, this is Ada from Acme.', 'How can I help you today?'],
    'made once each',
  );
  prepared.stop();

  const fresh = voiceOn(new SlowTextToSpeech());
  const freshSaidAt = Date.now();
  const later = await fresh.say(0, OPENING);
  assert.ok(
    later.firstAudioAt! - freshSaidAt >= TTS_MS - 50,
    'without it, the first audio waits for the synthesis',
  );
  fresh.stop();
});

test('in English a line’s first sentence is made as its first clause and the rest, ahead alike, and plays as one sentence', async () => {
  const tts = new SlowTextToSpeech();
  const speech = new PreparedSpeech(tts, 'joe', 'en-US');
  speech.prepare(OPENING);
  assert.equal(speech.prepared, 3, 'the first clause, the rest of its sentence, the next sentence');
  const marks: string[] = [];
  const voice = voiceOn(tts, speech, { marks });
  await new Promise((resolve) => setTimeout(resolve, TTS_MS + 200));
  await voice.say(0, OPENING);
  assert.deepEqual(
    tts.requests,
    ['Hi,', 'this is Ada from Acme.', 'How can I help you today?'],
    'made once each',
  );
  // Each piece is 200 ms of audio: all three have played within a second.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.deepEqual(marks, ['agent-0-0', 'agent-0-1'], 'a mark per sentence, not per piece');
  voice.stop();

  // Made when said, the same pieces.
  const fresh = new SlowTextToSpeech();
  const said = voiceOn(fresh, undefined, { marks: [] });
  await said.say(0, 'Certainly, I can help.');
  assert.deepEqual(fresh.requests, ['Certainly,', 'I can help.']);
  said.stop();
});

test('the next call’s opening (the same voice and text) is ready at once: made once for both calls', async () => {
  const tts = new SlowTextToSpeech();
  const first = new PreparedSpeech(tts, 'joe');
  first.prepare('Welcome to Acme.');
  await first.synthesize('Welcome to Acme.');
  const next = new PreparedSpeech(tts, 'joe');
  next.prepare('Welcome to Acme.');
  const voice = voiceOn(tts, next);
  const saidAt = Date.now();
  const { firstAudioAt } = await voice.say(0, 'Welcome to Acme.');
  assert.ok(firstAudioAt! - saidAt < TTS_MS / 2, `first audio ${firstAudioAt! - saidAt} ms after`);
  assert.deepEqual(tts.requests, ['Welcome to Acme.'], 'synthesised once');
  // Another voice is its own audio.
  new PreparedSpeech(tts, 'amy').prepare('Welcome to Acme.');
  assert.equal(tts.requests.length, 2);
  voice.stop();
});

test('calls whose streams start together share the opening’s synthesis under way; once it failed, the next call makes it anew', async () => {
  const tts = new SlowTextToSpeech();
  const calls = [0, 1, 2, 3, 4].map(() => new PreparedSpeech(tts, 'joe'));
  for (const call of calls) call.prepare('Thanks for calling Acme.');
  const heard = await Promise.all(calls.map((call) => call.synthesize('Thanks for calling Acme.')));
  assert.deepEqual(tts.requests, ['Thanks for calling Acme.'], 'one synthesis for the five calls');
  assert.ok(heard.every((audio) => audio.samples.length === 1600));

  tts.failingOnce.add('Sorry to keep you.');
  const [a, b] = [new PreparedSpeech(tts, 'joe'), new PreparedSpeech(tts, 'joe')];
  a.prepare('Sorry to keep you.');
  b.prepare('Sorry to keep you.');
  // Both shared the failed one and make it again when said, each its own (as a lone call would).
  await Promise.all([a.synthesize('Sorry to keep you.'), b.synthesize('Sorry to keep you.')]);
  const asked = () => tts.requests.filter((text) => text === 'Sorry to keep you.').length;
  assert.equal(asked(), 3, 'the shared one and one each');
  // Made when said is not made ahead: the next call prepares it anew, not the failure.
  const c = new PreparedSpeech(tts, 'joe');
  c.prepare('Sorry to keep you.');
  assert.equal(asked(), 4, 'asked at once, ahead');
  assert.equal((await c.synthesize('Sorry to keep you.')).samples.length, 1600);
  assert.equal(asked(), 4, 'and not again when said');
});

test('a preparation that failed is made again when said; a line not prepared is made when said', async () => {
  const tts = new SlowTextToSpeech();
  tts.failing = 1;
  const speech = new PreparedSpeech(tts, 'joe');
  speech.prepare('Hello there.');
  const voice = voiceOn(tts, speech);
  const { firstAudioAt } = await voice.say(0, 'Hello there.');
  assert.ok(firstAudioAt !== null, 'said all the same');
  await voice.say(1, 'Something else.');
  assert.deepEqual(tts.requests, ['Hello there.', 'Hello there.', 'Something else.']);
  voice.stop();
});

test('a retry after the speech service failed makes what is missing once, in order: the rest of a sentence begun, then the sentences after it', async () => {
  const tts = new SlowTextToSpeech(50);
  const marks: string[] = [];
  const voice = voiceOn(tts, undefined, { marks });
  // The first clause was made and plays; the rest of its sentence fails.
  tts.failingOnce.add('I can help.');
  await assert.rejects(voice.say(0, 'Certainly, I can help. Anything else?'));
  assert.deepEqual(tts.requests, ['Certainly,', 'I can help.'], 'the line stops at the failure');
  // The agent's step is retried: the same line again.
  await voice.say(0, 'Certainly, I can help. Anything else?');
  assert.deepEqual(tts.requests.slice(2), ['I can help.', 'Anything else?']);
  await until(() => marks.length === 2, 'both marks sent');
  assert.deepEqual(marks, ['agent-0-0', 'agent-0-1'], 'each sentence played whole, in order');

  // A sentence in the middle fails: the one after it is not played before it.
  tts.requests.length = 0;
  marks.length = 0;
  tts.failingOnce.add('Two.');
  voice.takeSentence(1, 0, 'One.');
  voice.takeSentence(1, 1, 'Two.');
  voice.takeSentence(1, 2, 'Three.');
  await assert.rejects(voice.say(1, 'One. Two. Three.'));
  await voice.say(1, 'One. Two. Three.');
  assert.deepEqual(tts.requests, ['One.', 'Two.', 'Two.', 'Three.']);
  await until(() => marks.length === 3, 'the three marks sent');
  assert.deepEqual(marks, ['agent-1-0', 'agent-1-1', 'agent-1-2']);
  voice.stop();
});

test('the opening known ahead: the configured one filled in, the scripted introduction; none when the agent listens or a model writes it', () => {
  const call = (fields: Partial<Record<string, unknown>>) =>
    ({
      agentSnapshot: { name: 'Ada', firstMessage: null, outboundFirstMessage: null },
      direction: 'outbound',
      channel: 'phone',
      firstMessage: null,
      metadata: { name: 'Kari' },
      fromNumber: '+4722000000',
      toNumber: '+4790000000',
      ...fields,
    }) as unknown as Call;
  const scripted = new ScriptedAgent();
  const model = {} as VoiceRuntime;
  assert.equal(
    openingToPrepare(call({ firstMessage: 'Hi {{name}}, it is Ada.' }), model),
    'Hi Kari, it is Ada.',
  );
  assert.equal(openingToPrepare(call({ firstMessage: '' }), scripted), null, 'the other person speaks first');
  assert.match(openingToPrepare(call({}), scripted)!, /this is Ada/);
  assert.equal(openingToPrepare(call({}), model), null, 'a language model writes it: nothing to make ahead');
  assert.equal(
    openingToPrepare(call({ direction: 'inbound' }), scripted),
    null,
    'inbound without one: it listens',
  );
});
