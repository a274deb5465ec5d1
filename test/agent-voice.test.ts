import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { DtmfDetector } from '../lib/audio/dtmf.js';
import { decodeMulaw } from '../lib/audio/mulaw.js';
import { createLogger } from '../lib/logger.js';
import { OpenAiTextToSpeech } from '../lib/speech/openai-text-to-speech.js';
import { encodeWav } from '../lib/speech/wav.js';
import { AgentVoice } from '../media/agent-voice.js';
import { type SpeechStandIn, startSpeechStandIn } from './support/speech-stand-in.js';
import { tone } from './support/test-audio.js';
import { orAfter, until } from './support/wait-for.js';

// The agent's voice on one call (media/agent-voice.ts): when its last line counts as played, so
// that a hang-up closes the stream only after the person heard it. The speech port is the real
// OpenAI-compatible adapter over HTTP; the speech server stands in with 400 ms of tone per sentence.

const SENTENCE_MS = 400;
const stands: SpeechStandIn[] = [];
after(async () => Promise.all(stands.map((stand) => stand.close())));

async function agentVoice() {
  const stand = await startSpeechStandIn(({ path }) =>
    path === '/v1/audio/voices'
      ? { status: 200, body: { voices: [{ id: 'joe', name: 'Joe', language: 'en-US' }] } }
      : {
          status: 200,
          headers: { 'Content-Type': 'audio/wav' },
          body: encodeWav({ sampleRate: 8000, samples: tone(440, 8000, (8000 * SENTENCE_MS) / 1000) }),
        },
  );
  stands.push(stand);
  const tts = new OpenAiTextToSpeech({ url: stand.url, apiKey: undefined, model: 'tts-1', timeoutMs: 5_000 });
  const marks: string[] = [];
  let frames = 0;
  const startedAt = performance.now();
  const voice = new AgentVoice({
    tts,
    voice: 'joe',
    out: { media: () => frames++, mark: (name) => marks.push(name), clear: () => {} },
    clock: () => performance.now() - startedAt,
    recording: null,
    logger: createLogger('warn'),
  });
  return { voice, marks, frames: () => frames };
}

/** Whether `promise` settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return orAfter(
    promise.then(() => true),
    ms,
    false,
  );
}

test('a client that echoes marks: the line has played when its last mark comes back, however late', async () => {
  const { voice, marks } = await agentVoice();
  await voice.say(0, 'Thank you for your time. Goodbye!');
  await until(() => marks.length === 1, 'the first sentence sent');
  voice.markEchoed(marks[0]);
  await until(() => marks.length === 2, 'the last sentence sent');
  const played = voice.played(30_000);
  // A client whose playing runs behind the gateway's clock (a slow network, a busy machine): a
  // second past the audio's end by that clock, the last sentence is still playing there.
  assert.equal(await settlesWithin(played, SENTENCE_MS + 1000), false, 'waits for the last mark');
  voice.markEchoed(marks[1]);
  assert.equal(await settlesWithin(played, 500), true, 'played once the last mark came back');
  voice.stop();
});

test('a client that never echoes a mark: the line has played shortly after its audio ends', async () => {
  const { voice, marks } = await agentVoice();
  await voice.say(0, 'Thank you for your time. Goodbye!');
  await until(() => marks.length === 2, 'the last sentence sent');
  assert.equal(await settlesWithin(voice.played(30_000), SENTENCE_MS + 2000), true);
  voice.stop();
});

test('after a barge-in no mark is awaited: what was sent played or was cleared', async () => {
  const { voice, marks, frames } = await agentVoice();
  await voice.say(0, 'Hello.');
  await until(() => marks.length === 1, 'the greeting sent');
  voice.markEchoed(marks[0]);
  const line = voice.say(1, 'One. Two. Three.');
  await until(() => marks.length === 2, 'the first sentence of the answer sent');
  const cut = voice.bargeIn();
  // The interrupted utterance is a handle: what it was to say, what of it played, when it stopped.
  const speech = cut?.speech;
  assert.equal(speech?.index, 1);
  assert.equal(speech.interrupted, true);
  assert.equal(speech.interruptedAtMs, cut?.atMs);
  // Its first sentence had begun (the next may have, in the moment before the barge-in).
  assert.match(speech.playedText(), /^One\.( Two\.)?$/);
  assert.equal(speech.text, 'One. Two. Three.');
  const sent = frames();
  assert.equal(await settlesWithin(voice.played(30_000), 500), true);
  await line;
  assert.ok(frames() - sent <= 1, 'nothing more is sent after the clear');
  voice.stop();
});

test('keys pressed are in-band DTMF after the line before them, once per line: a detector on the far side hears them in order', async () => {
  const sent: Uint8Array[] = [];
  const marks: string[] = [];
  const startedAt = performance.now();
  const voice = new AgentVoice({
    // Speech is the stand-in's tone; the keys never reach the speech service.
    tts: {
      synthesize: async () => ({ sampleRate: 8000, samples: tone(440, 8000, 1600) }),
      voices: async () => [],
    },
    voice: 'joe',
    out: { media: (payload) => sent.push(payload), mark: (name) => marks.push(name), clear: () => {} },
    clock: () => performance.now() - startedAt,
    recording: null,
    logger: createLogger('warn'),
  });
  await voice.say(0, 'One moment.');
  await voice.pressKeys(1, '1w2#');
  await voice.pressKeys(1, '1w2#'); // a retried command: not pressed twice
  await until(() => marks.length === 2, 'the line and the keys sent');
  assert.deepEqual(marks, ['agent-0-0', 'agent-1-0']);
  const detector = new DtmfDetector();
  const heard = sent.flatMap((payload) => detector.push(decodeMulaw(payload)));
  assert.deepEqual(heard, ['1', '2', '#']);
  voice.stop();
});

test('a client that plays keys itself (the SIP side) gets each key as an event in its place, with silence for its time', async () => {
  const sent: (Uint8Array | string)[] = [];
  const startedAt = performance.now();
  const voice = new AgentVoice({
    tts: {
      synthesize: async () => ({ sampleRate: 8000, samples: tone(440, 8000, 800) }),
      voices: async () => [],
    },
    voice: 'joe',
    out: {
      media: (payload) => sent.push(payload),
      mark: () => {},
      clear: () => {},
      dtmf: (digit) => sent.push(digit),
    },
    clock: () => performance.now() - startedAt,
    recording: null,
    logger: createLogger('warn'),
  });
  await voice.say(0, 'Pressing now.');
  await voice.pressKeys(1, '5w#');
  await until(() => sent.includes('#') && !voice.speaking(), 'the keys sent');
  const keys = sent.filter((item) => typeof item === 'string');
  assert.deepEqual(keys, ['5', '#'], 'w is a pause, not a key');
  const speechFrames = sent.indexOf('5');
  assert.equal(speechFrames, 5, 'the key after the 100 ms line before it');
  const afterKeys = sent.slice(speechFrames).filter((item): item is Uint8Array => typeof item !== 'string');
  const detector = new DtmfDetector();
  assert.deepEqual(
    afterKeys.flatMap((payload) => detector.push(decodeMulaw(payload))),
    [],
    'no tones in the audio',
  );
  // 5: 160 ms, w: 500 ms, #: 160 ms of silence (8 + 25 + 8 frames).
  assert.equal(afterKeys.length, 41);
  voice.stop();
});

test('held (the person speaks on before hearing the answer): nothing begins to play; released, the line plays whole', async () => {
  const { voice, marks, frames } = await agentVoice();
  voice.hold(true);
  const said = voice.say(0, 'Where would you like to go?');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(frames(), 0, 'no audio while held');
  assert.equal(voice.speaking(), false, 'held audio is not the agent speaking (no barge-in over it)');
  voice.hold(false);
  assert.notEqual((await said).firstAudioAt, null, 'its first audio left once released');
  await until(() => marks.length === 1, 'the line played once released');
  assert.equal(voice.takeDropped(), null, 'nothing dropped');
  voice.stop();
});

test('a held answer dropped: its lines never play, nor a line of it begun afterwards; the next line plays', async () => {
  const { voice, marks, frames } = await agentVoice();
  await voice.say(0, 'Hello, Acme taxis.');
  await until(() => marks.length === 1, 'the greeting played');
  voice.hold(true);
  const held = voice.say(1, 'Where would you like to go?');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const before = frames();
  voice.dropHeld();
  assert.deepEqual(await held, { firstAudioAt: null }, 'the held line ends unheard');
  // A line begun before the next one is answered (the dropped answer's turn still streaming) goes too.
  voice.takeSentence(2, 0, 'Anything else?');
  assert.equal(voice.takeDropped(), 1, 'the first line dropped unheard');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(frames(), before, 'nothing of it played');
  assert.deepEqual(marks, ['agent-0-0']);
  // The next line (the answer to both of the person's lines) plays.
  await voice.say(3, 'A taxi to the airport, booked.');
  await until(() => marks.includes('agent-3-0'), 'the next line played');
  voice.stop();
});

test('a held goodbye (its line ends the call) is not dropped: it plays', async () => {
  const { voice, marks } = await agentVoice();
  voice.hold(true);
  const said = voice.say(0, 'Goodbye!', true);
  await new Promise((resolve) => setTimeout(resolve, 200));
  voice.dropHeld();
  assert.notEqual((await said).firstAudioAt, null, 'it played');
  await until(() => marks.length === 1, 'its mark was sent');
  assert.equal(voice.takeDropped(), null);
  voice.stop();
});

test('what the person last heard: the latest line that began playing, not one held or dropped', async () => {
  const { voice, marks } = await agentVoice();
  assert.equal(voice.lastHeard(), '', 'nothing before the first line');
  await voice.say(0, 'Hello, Acme taxis. What is your booking number?');
  await until(() => marks.length === 2, 'the greeting played');
  assert.equal(voice.lastHeard(), 'Hello, Acme taxis. What is your booking number?');
  voice.hold(true);
  void voice.say(1, 'Thank you.');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(
    voice.lastHeard(),
    'Hello, Acme taxis. What is your booking number?',
    'a held line is unheard',
  );
  voice.dropHeld();
  assert.equal(voice.takeDropped(), 1);
  assert.equal(voice.lastHeard(), 'Hello, Acme taxis. What is your booking number?', 'nor a dropped one');
  voice.stop();
});
