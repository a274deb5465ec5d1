import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, test } from 'node:test';
import alawmulaw from 'alawmulaw';
import wavefile from 'wavefile';
import { loadSettings, type SpeechEndpoint } from '../lib/settings.js';
import { SpeechServerEndOfTurn } from '../lib/speech/end-of-turn.js';
import { speechFromSettings } from '../lib/speech/from-settings.js';
import { OpenAiSpeechToText } from '../lib/speech/openai-speech-to-text.js';
import { OPENAI_VOICES, OpenAiTextToSpeech } from '../lib/speech/openai-text-to-speech.js';
import { type Pcm, SpeechError } from '../lib/speech/speech-ports.js';
import { decodeWav, encodeWav } from '../lib/speech/wav.js';
import {
  type SpeechStandIn,
  type SpeechStandInReply,
  startSpeechStandIn,
} from './support/speech-stand-in.js';

// The OpenAI-compatible speech adapters against a real HTTP server on loopback that answers, and
// fails, as a real speech endpoint does.

const KEY = 'sk-test-4f9c2b7e1d';
const stands: SpeechStandIn[] = [];
after(async () => Promise.all(stands.map((stand) => stand.close())));

async function standIn(reply: Parameters<typeof startSpeechStandIn>[0]): Promise<SpeechStandIn> {
  const stand = await startSpeechStandIn(reply);
  stands.push(stand);
  return stand;
}

function endpoint(stand: { url: string }, timeoutMs = 2_000): SpeechEndpoint {
  return { url: stand.url, apiKey: KEY, model: 'whisper-1', timeoutMs };
}

/** 0.1 s of a 440 Hz tone at 8 kHz. */
const tone: Pcm = {
  sampleRate: 8000,
  samples: Int16Array.from({ length: 800 }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)),
  ),
};

const heard = { status: 200, body: { text: ' I would like to book a table. ' } } as const;

/** The SpeechError `promise` rejects with. */
async function speechError(promise: Promise<unknown>): Promise<SpeechError> {
  const error = await promise.then(
    () => assert.fail('expected a SpeechError'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof SpeechError, `not a SpeechError: ${error}`);
  return error;
}

test('transcribe: a multipart WAV with model, primary language and json format; the key only in Authorization', async () => {
  const stand = await standIn(() => heard);
  const text = await new OpenAiSpeechToText(endpoint(stand)).transcribe(tone, { language: 'en-US' });
  assert.equal(text, 'I would like to book a table.');
  const [request] = stand.requests;
  assert.equal(request.method, 'POST');
  assert.equal(request.path, '/v1/audio/transcriptions');
  assert.equal(request.headers.authorization, `Bearer ${KEY}`);
  const form = await stand.formOf(request);
  assert.equal(form.get('model'), 'whisper-1');
  assert.equal(form.get('language'), 'en');
  assert.equal(form.get('response_format'), 'json');
  const file = form.get('file');
  assert.ok(file instanceof Blob);
  const wav = decodeWav(new Uint8Array(await file.arrayBuffer()));
  assert.equal(wav.sampleRate, 8000);
  assert.deepEqual(wav.samples, tone.samples);
  assert.ok(!request.body.includes(KEY), 'the key is not in the body');
});

test('no audio is nothing said, without a request', async () => {
  const stand = await standIn(() => heard);
  const stt = new OpenAiSpeechToText(endpoint(stand));
  assert.equal(
    await stt.transcribe({ sampleRate: 8000, samples: new Int16Array(0) }, { language: 'en' }),
    '',
  );
  assert.equal(stand.requests.length, 0);
});

test('transcribeScored: verbose_json, the words and the last segment’s avg_logprob; an answer without segments has no score', async () => {
  const segments = [
    { start: 0, end: 1.2, text: ' The code', avg_logprob: -0.08, no_speech_prob: 0.01 },
    { start: 1.2, end: 1.9, text: ' did not.', avg_logprob: -0.31, no_speech_prob: 0.02 },
  ];
  const stand = await standIn((request) =>
    request.body.includes('verbose_json')
      ? {
          status: 200,
          body: { task: 'transcribe', language: 'english', text: ' The code did not. ', segments },
        }
      : heard,
  );
  const stt = new OpenAiSpeechToText(endpoint(stand));
  assert.deepEqual(await stt.transcribeScored(tone, { language: 'en-US' }), {
    text: 'The code did not.',
    avgLogprob: -0.31,
  });
  assert.equal((await stand.formOf(stand.requests[0])).get('response_format'), 'verbose_json');
  // A server that answers verbose_json as json (the text alone), or no audio at all: words, no score.
  const plain = new OpenAiSpeechToText(endpoint(await standIn(() => heard)));
  assert.deepEqual(await plain.transcribeScored(tone, { language: 'en' }), {
    text: 'I would like to book a table.',
  });
  assert.deepEqual(
    await plain.transcribeScored({ sampleRate: 8000, samples: new Int16Array(0) }, { language: 'en' }),
    {
      text: '',
    },
  );
});

test('a 503 then a 200: retried after a short backoff', async () => {
  const stand = await standIn(({ number }) =>
    number === 1 ? { status: 503, body: { error: { message: 'overloaded' } } } : heard,
  );
  const text = await new OpenAiSpeechToText(endpoint(stand)).transcribe(tone, { language: 'en' });
  assert.equal(text, 'I would like to book a table.');
  assert.equal(stand.requests.length, 2);
});

test('a 429 with Retry-After: the next attempt waits that long', async () => {
  const stand = await standIn(({ number }) =>
    number === 1
      ? { status: 429, headers: { 'Retry-After': '1' }, body: { error: { message: 'slow down' } } }
      : heard,
  );
  const started = Date.now();
  await new OpenAiSpeechToText(endpoint(stand)).transcribe(tone, { language: 'en' });
  assert.equal(stand.requests.length, 2);
  assert.ok(Date.now() - started >= 1_000, `waited ${Date.now() - started} ms`);
});

test('a Retry-After longer than the adapter waits: failed at once, as a passing failure', async () => {
  const stand = await standIn(() => ({ status: 429, headers: { 'Retry-After': '120' } }));
  const error = await speechError(
    new OpenAiSpeechToText(endpoint(stand)).transcribe(tone, { language: 'en' }),
  );
  assert.equal(error.retryable, true);
  assert.match(error.message, /answered 429.*it asked to wait \d+ s/);
  assert.equal(stand.requests.length, 1);
});

test('a 5xx every time: three attempts, then a retryable SpeechError naming the endpoint', async () => {
  const stand = await standIn(() => ({ status: 502, body: 'Bad Gateway' }));
  const error = await speechError(
    new OpenAiSpeechToText(endpoint(stand)).transcribe(tone, { language: 'en' }),
  );
  assert.equal(stand.requests.length, 3);
  assert.equal(error.retryable, true);
  assert.match(
    error.message,
    /^speech-to-text: POST http:\/\/127\.0\.0\.1:\d+\/v1\/audio\/transcriptions answered 502: Bad Gateway$/,
  );
});

test('a 401 is not retried, and the key never shows in the error, even when the server echoes it', async () => {
  const stand = await standIn(() => ({
    status: 401,
    body: { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error' } },
  }));
  const error = await speechError(
    new OpenAiSpeechToText(endpoint(stand)).transcribe(tone, { language: 'en' }),
  );
  assert.equal(stand.requests.length, 1);
  assert.equal(error.retryable, false);
  assert.match(error.message, /answered 401: Incorrect API key provided: \[redacted\]/);
  assert.ok(!error.message.includes(KEY));
  assert.ok(!String(error.stack).includes(KEY));
});

test('400 and 404 are not retried', async () => {
  for (const status of [400, 404]) {
    const stand = await standIn(() => ({ status, body: { error: { message: 'no' } } }));
    const error = await speechError(
      new OpenAiSpeechToText(endpoint(stand)).transcribe(tone, { language: 'en' }),
    );
    assert.equal(stand.requests.length, 1, `status ${status}`);
    assert.equal(error.retryable, false);
  }
});

test('a server that hangs: each attempt times out, three attempts, a retryable SpeechError', async () => {
  const stand = await standIn(() => 'hang');
  const started = Date.now();
  const error = await speechError(
    new OpenAiSpeechToText(endpoint(stand, 300)).transcribe(tone, { language: 'en' }),
  );
  assert.equal(stand.requests.length, 3);
  assert.equal(error.retryable, true);
  assert.match(error.message, /timed out after 300 ms/);
  // 3 × 300 ms plus the backoffs of 250 and 750 ms.
  assert.ok(Date.now() - started >= 1_900, `took ${Date.now() - started} ms`);
});

test('connection refused is a passing failure', async () => {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const error = await speechError(
    new OpenAiSpeechToText(endpoint({ url: `http://127.0.0.1:${port}/v1` })).transcribe(tone, {
      language: 'en',
    }),
  );
  assert.equal(error.retryable, true);
  assert.match(error.message, /failed: ECONNREFUSED/);
});

test("the caller's abort ends the request at once, with the caller's reason and no retry", async () => {
  const stand = await standIn(() => 'hang');
  const controller = new AbortController();
  const pending = new OpenAiSpeechToText(endpoint(stand, 5_000)).transcribe(tone, {
    language: 'en',
    signal: controller.signal,
  });
  setTimeout(() => controller.abort(new Error('barge-in')), 100);
  await assert.rejects(pending, /barge-in/);
  assert.equal(stand.requests.length, 1);
});

test("an abort while waiting to retry ends it with the caller's reason", async () => {
  const stand = await standIn(() => ({ status: 503 }));
  const controller = new AbortController();
  const pending = new OpenAiSpeechToText(endpoint(stand)).transcribe(tone, {
    language: 'en',
    signal: controller.signal,
  });
  setTimeout(() => controller.abort(new Error('caller hung up')), 120);
  await assert.rejects(pending, /caller hung up/);
  assert.equal(stand.requests.length, 1);
});

test('an answer without text is a failure that is not retried', async () => {
  const stand = await standIn(() => ({ status: 200, body: { transcript: 'hi' } }));
  const error = await speechError(
    new OpenAiSpeechToText(endpoint(stand)).transcribe(tone, { language: 'en' }),
  );
  assert.equal(error.retryable, false);
  assert.match(error.message, /no "text"/);
});

/** A speech server with two voices that answers `tone` as a WAV. */
function ttsServer(
  voices: SpeechStandInReply = {
    status: 200,
    body: {
      voices: [
        { id: 'joe', name: 'Joe', language: 'en-US' },
        { id: 'amy', name: 'Amy', language: 'en-US' },
      ],
    },
  },
) {
  return standIn(({ method, path }) => {
    if (method === 'GET' && path === '/v1/audio/voices') return voices;
    if (method === 'POST' && path === '/v1/audio/speech') {
      return { status: 200, headers: { 'Content-Type': 'audio/wav' }, body: encodeWav(tone) };
    }
    return { status: 404, body: { error: { message: 'not found' } } };
  });
}

test('synthesize: JSON {model, input, voice, response_format: "wav"}, the WAV decoded to PCM', async () => {
  const stand = await ttsServer();
  const tts = new OpenAiTextToSpeech({ ...endpoint(stand), model: 'tts-1' });
  const audio = await tts.synthesize('Hello there.', { voice: 'amy' });
  assert.equal(audio.sampleRate, 8000);
  assert.deepEqual(audio.samples, tone.samples);
  const speech = stand.requests.find((r) => r.path === '/v1/audio/speech');
  assert.ok(speech);
  assert.equal(speech.headers['content-type'], 'application/json');
  assert.equal(speech.headers.authorization, `Bearer ${KEY}`);
  assert.deepEqual(JSON.parse(speech.body.toString()), {
    model: 'tts-1',
    input: 'Hello there.',
    voice: 'amy',
    response_format: 'wav',
  });
});

test("voices: the server's own list; an unknown voice is spoken by its default (the first)", async () => {
  const stand = await ttsServer();
  const tts = new OpenAiTextToSpeech(endpoint(stand));
  assert.deepEqual(await tts.voices(), [
    { id: 'joe', name: 'Joe', language: 'en-US' },
    { id: 'amy', name: 'Amy', language: 'en-US' },
  ]);
  await tts.synthesize('Hello.', { voice: 'sim-nora' });
  await tts.synthesize('Hello again.', { voice: 'amy' });
  const voices = stand.requests
    .filter((r) => r.path === '/v1/audio/speech')
    .map((r) => JSON.parse(r.body.toString()).voice);
  assert.deepEqual(voices, ['joe', 'amy']);
  assert.equal(
    stand.requests.filter((r) => r.path === '/v1/audio/voices').length,
    1,
    'the list is asked once',
  );
});

test("the agent's language chooses among the server's voices: a voice it lacks becomes its first of that language", async () => {
  const stand = await ttsServer({
    status: 200,
    body: {
      voices: [
        { id: 'joe', name: 'Joe', language: 'en-US' },
        { id: 'espeak-nb', name: 'Norwegian Bokmål (eSpeak NG)', language: 'nb-NO' },
        { id: 'espeak-de', name: 'German (eSpeak NG)', language: 'de-DE' },
      ],
    },
  });
  const tts = new OpenAiTextToSpeech(endpoint(stand));
  await tts.synthesize('Hei.', { voice: 'alloy', language: 'nb-NO' });
  await tts.synthesize('Hei.', { voice: 'alloy', language: 'nb' });
  await tts.synthesize('Hallo.', { voice: 'alloy', language: 'de-AT' });
  await tts.synthesize('Bonjour.', { voice: 'alloy', language: 'fr-FR' });
  await tts.synthesize('Hello.', { voice: 'alloy' });
  // A voice the server has is taken whatever the language.
  await tts.synthesize('Hei.', { voice: 'joe', language: 'nb-NO' });
  const voices = stand.requests
    .filter((r) => r.path === '/v1/audio/speech')
    .map((r) => JSON.parse(r.body.toString()).voice);
  assert.deepEqual(voices, ['espeak-nb', 'espeak-nb', 'espeak-de', 'joe', 'joe', 'joe']);
});

test("a server without /audio/voices (OpenAI): OpenAI's voices, and an unknown voice becomes alloy", async () => {
  const stand = await ttsServer({
    status: 404,
    body: { error: { message: 'Invalid URL (GET /v1/audio/voices)' } },
  });
  const tts = new OpenAiTextToSpeech(endpoint(stand));
  const voices = await tts.voices();
  assert.deepEqual(
    voices.map((v) => v.id),
    ['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'nova', 'onyx', 'sage', 'shimmer'],
  );
  assert.deepEqual(voices, OPENAI_VOICES);
  await tts.synthesize('Hello.', { voice: 'joe' });
  const speech = stand.requests.find((r) => r.path === '/v1/audio/speech');
  assert.equal(JSON.parse(String(speech?.body)).voice, 'alloy');
});

test('a voice list of another shape, or an answer that is not a WAV, is a failure that is not retried', async () => {
  const odd = await ttsServer({ status: 200, body: [{ voice: 'joe' }] });
  assert.equal((await speechError(new OpenAiTextToSpeech(endpoint(odd)).voices())).retryable, false);
  const notWav = await standIn(({ path }) =>
    path.endsWith('/voices') ? { status: 404 } : { status: 200, body: 'ID3\u0004mp3 bytes' },
  );
  const error = await speechError(
    new OpenAiTextToSpeech(endpoint(notWav)).synthesize('Hi.', { voice: 'alloy' }),
  );
  assert.equal(error.retryable, false);
  assert.match(error.message, /not a WAV file/);
  assert.equal(notWav.requests.filter((r) => r.path === '/v1/audio/speech').length, 1);
});

test('from settings: both ports where their URL is set, undefined where not', () => {
  const none = speechFromSettings(loadSettings({}));
  assert.equal(none.stt, undefined);
  assert.equal(none.tts, undefined);
  const both = speechFromSettings(
    loadSettings({ VOICE_STT_URL: 'http://127.0.0.1:1/v1', VOICE_TTS_URL: 'http://127.0.0.1:1/v1' }),
  );
  assert.ok(both.stt instanceof OpenAiSpeechToText);
  assert.ok(both.tts instanceof OpenAiTextToSpeech);
  const sttOnly = speechFromSettings(loadSettings({ VOICE_STT_URL: 'http://127.0.0.1:1/v1' }));
  assert.equal(sttOnly.tts, undefined);
});

test('WAVs of other shapes are decoded to mono 16-bit PCM: float stereo averaged, G.711 μ-law expanded', () => {
  const stereo = new wavefile.WaveFile();
  stereo.fromScratch(2, 24000, '32f', [new Float64Array([0.5, -0.5, 0]), new Float64Array([0.5, 0.5, 0])]);
  assert.deepEqual(decodeWav(stereo.toBuffer()), {
    sampleRate: 24000,
    samples: Int16Array.from([16383, 0, 0]),
  });
  const phone = new wavefile.WaveFile();
  phone.fromScratch(1, 8000, '8m', alawmulaw.mulaw.encode(tone.samples));
  const decoded = decodeWav(phone.toBuffer());
  assert.equal(decoded.sampleRate, 8000);
  assert.deepEqual(decoded.samples, alawmulaw.mulaw.decode(alawmulaw.mulaw.encode(tone.samples)));
});

test('the end-of-turn model: multipart POST /audio/turn with the turn as a WAV, one attempt, {"complete"} read; another shape is a failure; a service without the route is not asked again', async () => {
  let complete: unknown = true;
  const stand = await standIn(({ method, path }) =>
    method === 'POST' && path === '/v1/audio/turn'
      ? { status: 200, body: { complete, probability: 0.91 } }
      : { status: 404, body: { error: { message: 'no route' } } },
  );
  const model = new SpeechServerEndOfTurn(endpoint(stand));
  assert.equal(await model.complete(tone), true);
  const form = await stand.formOf(stand.requests[0]);
  const file = form.get('file') as File;
  assert.equal(file.type, 'audio/wav');
  assert.deepEqual(decodeWav(new Uint8Array(await file.arrayBuffer())).samples, tone.samples);
  complete = 'yes';
  assert.equal((await speechError(model.complete(tone))).retryable, false);
  // A busy service: a failure at once, not retried (the gateway falls back to silence).
  const busy = await standIn(() => ({ status: 503, body: { error: { message: 'busy' } } }));
  const asked = new SpeechServerEndOfTurn(endpoint(busy));
  await speechError(asked.complete(tone));
  assert.equal(busy.requests.length, 1, 'one attempt: a late decision is of no use');
  await speechError(asked.complete(tone));
  assert.equal(busy.requests.length, 2, 'a passing failure: the next call asks again');
  // A hosted service without the route (OpenAI's): its 404 is remembered, so the calls after the
  // first fall back to silence at once, without a request each.
  const hosted = await standIn(() => ({ status: 404, body: { error: { message: 'Invalid URL' } } }));
  const none = new SpeechServerEndOfTurn(endpoint(hosted));
  for (let call = 0; call < 3; call++) {
    const error = await speechError(none.complete(tone));
    assert.match(error.message, /the speech service has none/);
    assert.equal(error.retryable, false);
  }
  assert.equal(hosted.requests.length, 1);
});
